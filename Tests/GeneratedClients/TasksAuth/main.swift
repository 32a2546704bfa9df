// The login flows through the client `hammock generate swift` makes of Tests/OpenAPI/documents/tasks.yaml
// (its securitySchemes ask for a bearer token), against `hammock serve tasks.yaml --auth login.json`: the
// app signs in at the mock, an Authenticator among the client's interceptors refreshes once for many
// refused requests, a 403 is left alone, a refused refresh signs the user out.
import Foundation
import HammockClient

let base = baseURL()  // http://127.0.0.1:PORT/v3: the document's base path
let root = base.deletingLastPathComponent()
let endpoint = OAuthTokenEndpoint(url: base.appendingPathComponent("auth/token"), clientID: "tasks-app")
let signOuts = SignOutCounter()
let authenticator = Authenticator(tokenEndpoint: endpoint) { await signOuts.add() }
await authenticator.signIn(try await endpoint.signIn(username: "ada", password: "lovelace"))
let api = TasksAuthClient(client: RestClient(baseURL: base, interceptors: [authenticator]))

actor SignOutCounter {
    var count = 0
    func add() { count += 1 }
}

/// The mock's admin API (outside the base path), with no authenticator.
let adminClient = RestClient(baseURL: root.appendingPathComponent("__hammock"))

/// Sends to the admin API; its JSON answer, if any.
func admin(_ method: HTTPRequest.Method, _ path: String, _ body: JSON? = nil) async throws -> JSON {
    var request = RequestBuilder(method, path)
    if let body { request.setBody(body) }
    let answer = try await adminClient.send(request)
    return answer.body.isEmpty ? .null : try JSON(parsing: answer.body)
}

/// How many times the app asked the token endpoint, by the mock's journal.
func tokenRequests() async throws -> Int {
    (try await admin(.get, "/requests").arrayValue ?? []).filter { $0["request"]?["path"] == "/v3/auth/token" }.count
}

/// `count` calls of `listProjects` at once; how many succeeded, and the errors of the others.
func concurrentLists(_ count: Int) async -> (successes: Int, errors: [RestError]) {
    await withTaskGroup(of: RestError?.self) { group in
        for _ in 0..<count {
            group.addTask {
                do {
                    _ = try await api.listProjects()
                    return nil
                } catch let error as RestError {
                    return error
                } catch {
                    return RestError(.transport(error), method: .get, url: "/projects")
                }
            }
        }
        var successes = 0
        var errors: [RestError] = []
        for await result in group {
            if let result { errors.append(result) } else { successes += 1 }
        }
        return (successes, errors)
    }
}

expect(try await api.listProjects().count == 2, "signed in, the documented projects")

// Every access token expires: twenty calls at once share one refresh, and all succeed.
_ = try await admin(.post, "/auth/expire")
let before = try await tokenRequests()
let expired = await concurrentLists(20)
expect(expired.successes == 20, "twenty calls across an expiry: \(expired.errors)")
expect(try await tokenRequests() - before == 1, "one refresh for twenty refusals")

// A 403 (the login's rule: deleting a project needs the admin role) is returned as it is, no refresh.
let launch = "6f1d2c3b-8a7e-4d5c-9b0a-112233445566"
let beforeForbidden = try await tokenRequests()
await expectStatus(403) { try await api.deleteProject(id: launch) }
expect(try await tokenRequests() == beforeForbidden, "a 403 never refreshes")

// The signing key rotates and the old one goes: one refresh, and the calls carry on.
_ = try await admin(.post, "/auth/rotate", ["keepPrevious": false])
let beforeRotation = try await tokenRequests()
let rotated = await concurrentLists(10)
expect(rotated.successes == 10, "ten calls across a key rotation: \(rotated.errors)")
expect(try await tokenRequests() - beforeRotation == 1, "one refresh for the rotation")

// The next refresh is refused: every waiting call fails with the same error, and the user is signed out.
_ = try await admin(.post, "/auth/expire")
_ = try await admin(.post, "/auth/reject-refresh")
let refused = await concurrentLists(10)
expect(refused.successes == 0, "no call succeeds once the session is over")
for error in refused.errors {
    if case .authentication(let cause) = error.reason {
        expect(cause.reason == .refreshRejected && cause.oauthError == "invalid_grant", "the refresh's error: \(cause)")
    } else {
        // A call the machine started only after the sign-out went without a token: the mock's 401.
        expect(error.status?.code == 401, "a 401 after the sign-out: \(error)")
    }
}
expect(!(await authenticator.isSignedIn), "signed out")
expect(await signOuts.count == 1, "the app told once")

print("tasks-auth: the login's flows through the generated client, \(checked) promises kept")
