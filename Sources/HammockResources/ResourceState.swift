public import Foundation

/// A resource's state at one moment, as a value: safe to hand to any task.
///
/// ```swift
/// Task.detached {
///     for await state in await profile.states() {
///         await cache.remember(state.latestData)      // no hop back to the main actor needed
///     }
/// }
/// ```
public struct ResourceState: Sendable {
    /// The event that produced this state (`.observerAdded` for the first one).
    public var event: ResourceEvent
    /// The resource's URL.
    public var url: URL
    /// The latest data then.
    public var latestData: Entity?
    /// The latest error then.
    public var latestError: ResourceError?
    /// Whether a load was in flight.
    public var isLoading: Bool
    /// Whether any request was in flight.
    public var isRequesting: Bool
}

extension Resource {
    /// The resource's state after each event, as values, starting with the current state. Unlike
    /// ``events()``, each element carries the state as it was when the event happened, so a consumer
    /// on another task, or one that falls behind, still sees every step exactly.
    ///
    /// ```swift
    /// for await state in profile.states() {
    ///     print(state.event, state.isLoading, state.latestData?.jsonContent ?? "no data")
    /// }
    /// ```
    /// A consumer that only needs the latest state (a view model, say) asks for
    /// `.bufferingNewest(1)`: a slow consumer of a polled resource then never piles up responses.
    public func states(
        bufferingPolicy: AsyncStream<ResourceState>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<ResourceState> {
        stream(bufferingPolicy: bufferingPolicy) { resource, event in resource.state(after: event) }
    }

    /// The state now, labelled with `event`.
    public func state(after event: ResourceEvent) -> ResourceState {
        ResourceState(
            event: event, url: url, latestData: latestData, latestError: latestError, isLoading: isLoading,
            isRequesting: isRequesting)
    }
}
