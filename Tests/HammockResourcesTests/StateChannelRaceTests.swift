import Foundation
import HammockTesting
import Testing

@testable import HammockResources

/// The queue behind `states()`: yields from the main actor, a wipe's clear and the sequence's end race a
/// consumer's wait on a busy machine. A second resume would trap, a lost one would hang the consumer.
@Suite("State channel races")
struct StateChannelRaceTests {
    static func state(_ number: Int) -> ResourceState {
        ResourceState(
            event: .observerAdded, url: URL(fileURLWithPath: "/\(number)"), latestData: nil, latestError: nil,
            isLoading: false, isRequesting: false)
    }

    @Test("Yields, clears and the end racing a waiting consumer never trap or hang, and states arrive in order, once")
    func races() async {
        await withBusyMachine {
            for round in 0..<300 {
                let channel = StateChannel(policy: .bufferingNewest(8))
                let consumer = Task.detached { () -> [Int] in
                    var seen: [Int] = []
                    while let state = await channel.next() { seen.append(Int(state.url.lastPathComponent) ?? -1) }
                    return seen
                }
                let producer = Task.detached {
                    for number in 0..<60 {
                        channel.yield(Self.state(number))
                        if number % 7 == 0 { await Task.yield() }
                        if number == 30 && round % 3 == 0 { channel.clear() }
                    }
                }
                await producer.value
                channel.finish()
                let seen = await consumer.value
                #expect(seen == seen.sorted(), "round \(round): \(seen)")
                #expect(Set(seen).count == seen.count)
                // After the end nothing is kept, and a late wait returns at once.
                channel.yield(Self.state(99))
                #expect(await channel.next() == nil)
            }
        }
    }
}
