import HTTPTypes
import HammockServer
import HammockTestSupport
import Synchronization
import Testing

extension ManualClock {
    /// Sends `request` to `server` and checks that the answer waits until exactly `delay` has passed on
    /// this clock since the request arrived; returns the answer's status.
    func expectAnswerHeld(_ request: MockRequest, by server: MockServer, for delay: Duration) async -> HTTPResponse.Status {
        let done = Mutex(false)
        let task = Task {
            let response = await server.respond(to: request)
            done.withLock { $0 = true }
            return response.status
        }
        #expect(await waitForSleepers(1))
        advance(by: delay - .milliseconds(1))
        for _ in 0..<1000 { await Task.yield() }
        #expect(done.withLock { $0 } == false)
        advance(by: .milliseconds(1))
        return await task.value
    }
}
