import Foundation
import HammockTestSupport
import Testing

@testable import HammockClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One URLSession transfer ends once, whichever of its ends comes first: the task's completion, the
/// deadline, the size limit or a cancellation, racing on a busy machine. A second resume of the call's
/// continuation would trap; a lost one would hang the call.
@Suite("URLSession transfer races")
struct DataTransferRaceTests {
    static let response = HTTPURLResponse(
        url: URL(fileURLWithPath: "/"), statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Length": "4"])

    @Test("Completion, deadline, limit and cancellation racing end each call exactly once")
    func endsOnce() async throws {
        let response = try #require(Self.response)
        let outcomes = await withBusyMachine {
            await withTaskGroup(of: String.self) { group in
                for round in 0..<400 {
                    group.addTask {
                        let transfer = DataTransfer(limit: round % 4 == 0 ? 2 : 1 << 20, reporter: nil)
                        // The ends race the start, and each other, from threads of their own.
                        let racers: [@Sendable () -> Void] = [
                            { _ = transfer.received(Data("ab".utf8)) },
                            { transfer.finish(data: Data("abcd".utf8), response: response, error: nil) },
                            { transfer.fail(with: URLError(.timedOut)) },
                            { transfer.completed(error: CancellationError(), response: nil) },
                        ]
                        let order = (0..<racers.count).map { ($0 * (round + 1) + round) % racers.count }
                        do {
                            let (data, _) = try await withCheckedThrowingContinuation { continuation in
                                for index in order.prefix(round % 3) { racers[index]() }
                                transfer.start(continuation)
                                for index in order.dropFirst(round % 3) {
                                    Thread.detachNewThread { racers[index]() }
                                }
                            }
                            return "data \(data.count)"
                        } catch let error as URLError {
                            return "URLError \(error.code.rawValue)"
                        } catch {
                            return "\(type(of: error))"
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(outcomes.count == 400)
        // Every call ended with one of the racers' outcomes.
        let possible: Set<String> = [
            "data 4", "URLError \(URLError.Code.timedOut.rawValue)", "CancellationError",
            "URLError \(URLError.Code.dataLengthExceedsMaximum.rawValue)",
        ]
        #expect(Set(outcomes).isSubset(of: possible), "\(Set(outcomes))")
    }
}
