import Foundation
import Testing

@Suite("The people-browser example", .timeLimit(.minutes(1)))
struct PeopleBrowserTests {
    @Test("signs in, pages, opens and renames a person, signs out and back in, against its own mock")
    func session() async throws {
        let process = try HammockProcess([], executable: "people-browser")
        for command in [
            "list", "signin ada wrong", "signin ada lovelace", "list", "more", "show 3", "rename 3 Grace Hopper", "list",
            "all", "signout", "list", "signin ada lovelace", "list", "show nine", "quit",
        ] {
            try process.send(command)
        }
        try process.closeInput()
        var lines: [String] = []
        for await line in process.lines { lines.append(line) }
        #expect(await process.exitStatus() == 0, "stderr: \(process.errorOutput.withLock { $0 })")
        let summaries = lines.filter { $0.hasPrefix("people: ") }
        // Before signing in, and after signing out, the protected list is refused.
        #expect(lines.filter { $0 == "sign in first (401)" }.count == 2, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("sign-in refused: ") })
        #expect(
            summaries == [
                "people: 5 loaded in 1 pages; more: yes", "people: 10 loaded in 2 pages; more: yes",
                // After the rename, the stale list loads its two pages again.
                "people: 10 loaded in 2 pages; more: yes", "people: 23 loaded in 5 pages; more: no",
                // Signed in again: one page, not the depth the last session scrolled to.
                "people: 5 loaded in 1 pages; more: yes",
            ], "\(lines)")
        #expect(lines.contains("renamed #3 to Grace Hopper; list up to date: false"))
        #expect(lines.filter { $0 == "  #3 Grace Hopper" }.count == 3)
        #expect(lines.contains("signed out; people shown: 0"))
        #expect(lines.contains("error: 'nine' is not a number"))
    }
}
