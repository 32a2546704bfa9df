/// What just happened to a resource. Observers get one with every change.
///
/// ```swift
/// profile.addObserver(owner: self) { resource, event in
///     if case .newData(.network) = event { flashUpdatedBadge() }
///     render(resource)
/// }
/// ```
/// The event says why observers are called; the resource itself holds the state to render.
public enum ResourceEvent: Sendable, Hashable, CustomStringConvertible {
    /// The observer receiving this event was just added. Every observer gets it first.
    case observerAdded
    /// A load request started: `isLoading` is now true.
    case requested
    /// A load request was cancelled before it finished. Data and error are unchanged.
    case requestCancelled
    /// `latestData` changed; the source says where the new data came from.
    case newData(NewDataSource)
    /// The server answered 304 Not Modified: the data is unchanged and its timestamp is new.
    case notModified
    /// A load failed: `latestError` is set and `latestData` is kept.
    case error

    /// Where new data came from.
    public enum NewDataSource: Sendable, Hashable {
        /// A response from the network.
        case network
        /// The persistent cache, before the network answered.
        case cache
        /// ``Resource/overrideLocalData(with:)`` or ``Resource/overrideLocalContent(with:)``.
        case localOverride
        /// ``Resource/wipe()``: the data (and error) are gone.
        case wipe
    }

    public var description: String {
        switch self {
        case .observerAdded: "observerAdded"
        case .requested: "requested"
        case .requestCancelled: "requestCancelled"
        case .newData(let source): "newData(\(source))"
        case .notModified: "notModified"
        case .error: "error"
        }
    }
}
