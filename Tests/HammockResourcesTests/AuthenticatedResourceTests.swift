import Foundation
import HTTPTypes
import HammockClient
import HammockJSON
import HammockJWT
import HammockResources
import HammockServer
import HammockTesting
import Testing

/// An observed resource on a service whose interceptors hold an `Authenticator`, against the mock's
/// login in process: an expired token is renewed inside the request, so the resource never shows it.
@MainActor
@Suite("Resources across a token refresh")
struct AuthenticatedResourceTests {
    @Test("A resource observed across a refresh shows new data and never an error state")
    func noErrorAcrossRefresh() async throws {
        let text = """
            {"resources": [{"name": "people", "fields": {"name": "string"}}], "data": {"people": [{"name": "Ada"}]},
             "auth": {"users": [{"username": "ada", "password": "lovelace"}], "protect": [{"resource": "people"}]}}
            """
        let configuration = try ServerConfiguration(parsing: Array(text.utf8), file: "auth.json")
        let server = try await MockServer.inMemory(configuration, tokenSigner: JWTAccessTokens())
        let transport = MockServerTransport(server: server)
        let endpoint = OAuthTokenEndpoint(url: try #require(URL(string: "http://mock/auth/token")), transport: transport)
        let authenticator = Authenticator(tokenEndpoint: endpoint)
        await authenticator.signIn(try await endpoint.signIn(username: "ada", password: "lovelace"))
        let api = try Service(baseURL: "http://mock", transport: transport, interceptors: [authenticator], clock: ManualClock())
        let people = api.resource("/people")
        let states = people.states(bufferingPolicy: .unbounded)
        _ = await people.load().response()
        try server.expireAccessTokens()
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "Grace"]))  // refused: no token
        try await server.addData([["name": "Grace"]], for: "people")
        _ = await people.load().response()
        #expect(people.latestError == nil)
        #expect(people.latestData?.jsonContent?.arrayValue?.count == 2)
        var seen: [ResourceState] = []
        for await state in states {
            seen.append(state)
            if seen.count == 5 { break }
        }
        #expect(seen.map(\.event) == [.observerAdded, .requested, .newData(.network), .requested, .newData(.network)])
        #expect(seen.allSatisfy { $0.latestError == nil })
        #expect(server.journal.entries.filter { $0.path == "/auth/token" }.count == 2)  // the sign-in and one refresh
    }
}
