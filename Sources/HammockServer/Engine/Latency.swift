/// A range of simulated response times.
///
/// Each response is held until a uniformly random time in the range has passed since its request
/// arrived, so work the server does counts towards the delay instead of adding to it.
///
/// ```swift
/// let server = try await MockServer(resources: [people], latency: Latency(.milliseconds(200)...(.milliseconds(500))))
/// ```
public struct Latency: Sendable, Hashable {
    /// The shortest time a response takes.
    public var minimum: Duration
    /// The longest time a response takes (unless the server itself is slower).
    public var maximum: Duration

    /// A range of response times; a reversed range is put in order.
    public init(_ range: ClosedRange<Duration>) {
        minimum = range.lowerBound
        maximum = range.upperBound
    }

    /// A range from seconds, as configuration files give it.
    public init(minimumSeconds: Double, maximumSeconds: Double) {
        let low = Duration.seconds(min(minimumSeconds, maximumSeconds))
        let high = Duration.seconds(max(minimumSeconds, maximumSeconds))
        self.init(low...high)
    }

    /// A time in the range for a uniform random number in `0..<1`.
    func delay(forUnit unit: Double) -> Duration {
        minimum + (maximum - minimum) * min(max(unit, 0), 1)
    }
}
