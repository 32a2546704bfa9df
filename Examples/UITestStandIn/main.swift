// A stand-in for an app under a UI test: a separate process that finds its server the way an app does
// (HAMMOCK_BASE_URL in its launch environment) and calls it with plain URLSession. The test drives it
// through standard input, one command per line, as XCUITest drives an app through taps:
//   list       prints `people: ada, bob` (or `status: 503`)
//   add NAME   prints `created ID`
// It exits at the end of its input.
import Foundation
import HammockClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct Person: Codable {
    var id: Int?
    var name: String
}

func write(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let baseURL: URL
do {
    guard let found = try MockLaunchEnvironment.baseURL() else {
        FileHandle.standardError.write(Data("stand-in: no \(MockLaunchEnvironment.variable) in the environment\n".utf8))
        exit(2)
    }
    baseURL = found
} catch {
    FileHandle.standardError.write(Data("stand-in: \(error)\n".utf8))
    exit(2)
}

let session = URLSession(configuration: .ephemeral)
let people = baseURL.appendingPathComponent("people")
while let line = readLine() {
    do {
        if line == "list" {
            let (data, response) = try await session.data(from: people)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard status == 200 else {
                write("status: \(status)")
                continue
            }
            let names = try JSONDecoder().decode([Person].self, from: data).map(\.name)
            write("people: " + names.joined(separator: ", "))
        } else if line.hasPrefix("add ") {
            var request = URLRequest(url: people)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONEncoder().encode(Person(name: String(line.dropFirst(4))))
            let (data, _) = try await session.data(for: request)
            write("created \(try JSONDecoder().decode(Person.self, from: data).id ?? 0)")
        } else {
            write("unknown command: \(line)")
        }
    } catch {
        write("error: \(error)")
    }
}
