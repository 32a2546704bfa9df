import Foundation
import Testing

@Suite("The hammock-tour example", .timeLimit(.minutes(1)))
struct TourTests {
    @Test("runs the four parts against each other and exits cleanly")
    func tour() async throws {
        let process = try HammockProcess([], executable: "hammock-tour")
        var lines: [String] = []
        for await line in process.lines { lines.append(line) }
        #expect(await process.exitStatus() == 0, "stderr: \(process.errorOutput.withLock { $0 })")
        #expect(lines.first == "client: created Ada with id 1")
        #expect(lines.contains("resource: newData(network), loading: false, residents: [\"Ada\", \"Grace\"]"))
        #expect(lines.contains("resource: notModified, loading: false, residents: [\"Ada\", \"Grace\"]"))
        #expect(lines.last?.hasPrefix("cached validators: ETag \"") == true)
    }
}
