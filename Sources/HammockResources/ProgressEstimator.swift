import Foundation

/// Learns how long requests take, to estimate progress for requests that report none.
///
/// A request's expected duration is the service's typical latency (time to a small response) plus
/// its bytes (request body and the size of the resource's previous response) at the throughput seen
/// on large responses. Both are running averages over finished requests.
@MainActor
final class ProgressEstimator {
    /// Typical time to a small response, in seconds.
    private(set) var latency = 0.25
    /// Bytes per second seen on large responses.
    private(set) var throughput = 1_000_000.0
    private static let largeResponse = 64 * 1024
    private static let weight = 0.25

    /// The expected duration, in seconds, of a request carrying `bytes` in total.
    func expectedDuration(bytes: Int) -> Double {
        latency + Double(bytes) / throughput
    }

    /// Learns from a finished request.
    func record(duration: Duration, bytes: Int) {
        let seconds = duration.seconds
        guard seconds > 0 else { return }
        if bytes < Self.largeResponse {
            latency += (seconds - latency) * Self.weight
        } else {
            let transfer = max(seconds - latency, 0.001)
            throughput += (Double(bytes) / transfer - throughput) * Self.weight
        }
    }

    /// Progress after `elapsed` of an `expected` duration: starts at 0, rises quickly then slowly, and
    /// stays below 0.95 until the request ends (when it jumps to 1).
    nonisolated static func fraction(elapsed: Double, expected: Double) -> Double {
        guard elapsed > 0 else { return 0 }
        return 0.95 * (1 - exp(-elapsed / max(expected, 0.001)))
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
