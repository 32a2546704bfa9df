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

    /// A range from seconds, as configuration files give it; each is held between 0 and a day (NaN
    /// counts as 0), so no value can trap.
    public init(minimumSeconds: Double, maximumSeconds: Double) {
        let (first, second) = (Self.clamped(minimumSeconds), Self.clamped(maximumSeconds))
        self.init(.seconds(min(first, second)) ... .seconds(max(first, second)))
    }

    package static func clamped(_ seconds: Double) -> Double { seconds.isNaN ? 0 : min(max(seconds, 0), 86_400) }

    /// A time in the range for a uniform random number in `0..<1`.
    func delay(forUnit unit: Double) -> Duration {
        minimum + (maximum - minimum) * min(max(unit, 0), 1)
    }
}
