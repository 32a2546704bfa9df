#if canImport(SwiftUI)
public import SwiftUI
#endif

/// A typed resource held by a screen for as long as it is shown: observed while visible (so it reloads
/// after an invalidation, and counts as in use), loaded if needed when it appears, and let go of when
/// it disappears, a load it started cancelled if no one else observes the resource by then.
///
/// ```swift
/// let person = ViewResource(api.resource(people.endpoints.person(id: 3)))
/// person.appear()                 // a screen's viewWillAppear, or SwiftUI's `.resource(person)`
/// render(person.value, person.error, person.isLoading)
/// person.disappear()
/// ```
/// Reading `value`, `error` and `isLoading` observes the resource, so a SwiftUI view that shows them
/// updates. The logic is here, free of UI frameworks; SwiftUI's modifier only calls `appear()` and
/// `disappear()`.
@MainActor
public final class ViewResource<Value: Sendable> {
    /// The resource shown.
    public let typed: TypedResource<Value>
    /// How long after `disappear()` a load still in flight may run before it is cancelled, if no one
    /// observes the resource by then: a screen replaced by one showing the same resource keeps it.
    public let cancelDelay: Duration
    /// Whether the screen is shown (between `appear()` and `disappear()`).
    public private(set) var isVisible = false

    /// A screen's hold on `typed`.
    public init(_ typed: TypedResource<Value>, cancelDelay: Duration = .seconds(1)) {
        self.typed = typed
        self.cancelDelay = cancelDelay
    }

    /// The value, if the data is there and decodes.
    public var value: Value? { typed.value }
    /// What to show instead: the data does not decode, or the latest load failed.
    public var error: ResourceError? { typed.decodingError ?? typed.latestError }
    /// Whether a load is in flight.
    public var isLoading: Bool { typed.isLoading }

    /// The screen appeared: observe the resource and load it if it needs it. Calling it again while
    /// visible does nothing.
    public func appear() {
        guard !isVisible else { return }
        isVisible = true
        typed.resource.addObserver(owner: self) { _, _ in }
        typed.resource.loadIfNeeded()
    }

    /// The screen went away: stop observing, and cancel a load still in flight after ``cancelDelay`` if
    /// no one else observes the resource by then.
    public func disappear() {
        guard isVisible else { return }
        isVisible = false
        typed.resource.removeObservers(ownedBy: self)
        typed.resource.cancelLoadIfUnobserved(afterDelay: cancelDelay)
    }
}

#if canImport(SwiftUI)
extension View {
    /// Holds `resource` for the view's time on screen: observed and loaded if needed when it appears,
    /// let go of when it disappears (``ViewResource``). Read its `value`, `error` and `isLoading` in the
    /// body; the view updates when they change.
    ///
    /// ```swift
    /// Text(person.value?.name ?? "…").resource(person)
    /// ```
    /// Compiled only where SwiftUI exists: not built by this project's Linux CI, whose tests drive
    /// `ViewResource` directly.
    public func resource<Value: Sendable>(_ resource: ViewResource<Value>) -> some View {
        onAppear { resource.appear() }.onDisappear { resource.disappear() }
    }
}
#endif
