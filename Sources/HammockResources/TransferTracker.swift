import HammockClient
import Synchronization

/// What the transport said about one request's transfer, stamped with the service's time. Written by
/// the transport's task through `TransferProgress`, read by ``ResourceRequest/progress``. A retried
/// attempt starts again at its own response head.
final class TransferTracker: Sendable {
    struct State: Sendable {
        var headReceivedAt: ServiceInstant?
        var expectedBytes: Int?
        var receivedBytes = 0
    }

    private let state = Mutex(State())
    private let clock: ServiceClock

    init(clock: ServiceClock) { self.clock = clock }

    var snapshot: State { state.withLock { $0 } }

    func record(_ event: TransferEvent) {
        switch event {
        case .responseHeadReceived(let expected):
            let now = clock.now()
            state.withLock {
                $0.headReceivedAt = now
                $0.expectedBytes = expected
                $0.receivedBytes = 0
            }
        case .responseBytesReceived(let total):
            state.withLock { $0.receivedBytes = total }
        case .requestBytesSent:
            // The estimate counts a request's body by its size already; the response moves it from here.
            break
        }
    }
}
