// An app's code that uses the mock server in process, as its tests would: `scripts/check-consumer`
// builds it in a package of its own that depends only on the HammockServer product, and checks that
// no SwiftNIO, Hummingbird, GRDB or swift-syntax module was compiled for it.
import HammockServer

let people = MockResource("people", fields: ["name": .string])
let server = try await MockServer(resources: [people])
let created = await server.respond(to: MockRequest(.post, "/people", json: ["name": "ada"]))
let listed = await server.respond(to: MockRequest(.get, "/people"))
print("\(created.status.code) \(try listed.json())")
