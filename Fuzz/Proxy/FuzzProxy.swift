import Foundation
import FuzzSupport
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockProxy
import HammockServer
import HammockWire
import Synchronization

/// The proxy's promise: what no route answers reaches the backend as the client sent it (method, path and
/// query byte for byte, body, every end-to-end field with its values in order; the hop-by-hop ones and
/// those `Connection` names dropped), and the backend's answer comes back as it gave it (status, body,
/// every end-to-end field). The bytes choose requests (paths and queries with characters URLs escape or
/// not, repeated fields, hop-by-hop ones, bodies up to past the size the proxy streams) and the backend's
/// answers; a backend on loopback (a Hammock server whose one route answers what the input planned and
/// notes what it saw) stands behind a proxy asked in process.
@main
struct FuzzTarget {
    static func main() {
        Fuzzer.run { data, count in
            FuzzTarget.exchange(Fuzzer.bytes(data, count))
            return 0
        }
    }

    /// The backend and the proxy, started once for the whole run.
    static let harness: Harness =
        Fuzzer.wait { () async -> Harness? in
            try? await Harness.start()
        } ?? { fatalError("the backend and the proxy could not start") }()

    static let methods: [HTTPRequest.Method] = [.get, .get, .head, .post, .put, .patch, .delete]
    /// Path segments: plain, escaped, and characters a URL parser escapes or rejects (`[`, `|`, `{`, `^`).
    static let segments = [
        "people", "3", "a%20b", "%C3%A9", "x.json", "a[1]", "p|q", "{id}", "^up", "~t", "a;b=c", "%2F", "..", ".", "@me",
        "a:b", "!$&'()*+,=",
    ]
    static let queryItems = [
        "q=1", "q=2", "a%20b=c+d", "filter[name]=x", "ids[]=1", "x=%7B%7D", "p|q=1", "e=", "flag", "u=%C3%A9", "s={a}",
        "c=^", "=", "&", "k=v=w",
    ]
    static let requestFieldNames = [
        "X-Trace", "Accept", "Accept-Language", "Cookie", "Authorization", "X-Forwarded-For", "User-Agent", "Via",
        "Forwarded", "X-Drop", "Keep-Alive", "TE", "Proxy-Authorization", "Cache-Control", "X-Trace", "If-Match",
    ]
    static let fieldValues = [
        "1", "two words", "a, b", "x;y=z", "\"quoted\"", "gzip, br", "Bearer t0k3n", "sid=1; theme=dark", "text/html",
        "ümlaut", "tab\there", "trailers", "", "*",
    ]
    static let answerFieldNames = [
        "X-Reply", "Set-Cookie", "Set-Cookie", "Cache-Control", "Vary", "Link", "Location", "ETag", "Content-Language",
        "X-Reply", "Keep-Alive", "Proxy-Connection", "Content-Type", "WWW-Authenticate",
    ]
    static let statuses = [200, 200, 201, 202, 204, 206, 301, 302, 303, 307, 400, 401, 403, 404, 409, 418, 422, 429, 500, 503]

    static func bytes(_ reader: inout ByteReader) -> [UInt8] {
        switch reader.choose(16) {
        case 0: return []
        // Past what the proxy reads whole (64 KiB): the answer streams.
        case 1: return (0..<(70_000 + reader.choose(200))).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        case 2, 3: return Array(#"{"name": "Ada", "n": 1}"#.utf8)
        default: return (0..<reader.choose(64)).map { _ in reader.byte() }
        }
    }

    static func exchange(_ input: [UInt8]) {
        var reader = ByteReader(input)
        let harness = self.harness
        for _ in 0..<(1 + reader.choose(3)) {
            let method = reader.pick(methods)
            var target = "/" + (0..<(1 + reader.choose(3))).map { _ in reader.pick(segments) }.joined(separator: "/")
            if reader.choose(2) == 0 {
                target += "?" + (0..<(1 + reader.choose(3))).map { _ in reader.pick(queryItems) }.joined(separator: "&")
            }
            var fields = HTTPFields()
            for _ in 0..<reader.choose(5) {
                guard let name = HTTPField.Name(reader.pick(requestFieldNames)) else { continue }
                fields.append(HTTPField(name: name, value: reader.pick(fieldValues)))
            }
            if reader.choose(4) == 0 {
                fields.append(
                    HTTPField(name: .connection, value: reader.pick(["keep-alive", "X-Drop", "x-drop, X-Trace", "close"])))
            }
            var body: [UInt8] = []
            if [.post, .put, .patch].contains(method) || reader.choose(8) == 0 {
                body = bytes(&reader)
                if !body.isEmpty {
                    fields[.contentType] = reader.pick(["application/json", "application/octet-stream", "text/plain"])
                }
            }
            var plan = Plan(status: reader.pick(statuses), fields: [], body: bytes(&reader))
            // The backend (a Hammock server) sends no body where its status forbids one.
            if !MockResponse.allowsBody(HTTPResponse.Status(code: plan.status)) { plan.body = [] }
            for _ in 0..<reader.choose(5) {
                guard let name = HTTPField.Name(reader.pick(answerFieldNames)) else { continue }
                let value =
                    name == .location
                    ? reader.pick(["/people/3", "https://elsewhere.test/x", "?page=2"]) : reader.pick(fieldValues)
                plan.fields.append(HTTPField(name: name, value: value))
            }
            let request = MockRequest(method, target, headerFields: fields, body: body)
            check(request, plan: plan, harness: harness)
        }
    }

    /// Sends `request` through the proxy with the backend answering `plan`; checks both hops.
    static func check(_ request: MockRequest, plan: Plan, harness: Harness) {
        harness.backend.plan.withLock { $0 = plan }
        harness.backend.seen.withLock { $0 = nil }
        let proxy = harness.proxy
        let (answer, body) = Fuzzer.wait { () async -> (MockResponse, [UInt8]?) in
            let answer = await proxy.respond(to: request)
            return (answer, try? await answer.stream?.collect() ?? answer.body)
        }
        let target = request.path + (request.query.map { "?" + $0 } ?? "")
        let context = "\(request.method) \(target) with \(request.headerFields.map { "\($0.name): \($0.value)" })"
        guard let seen = harness.backend.seen.withLock({ $0 }) else {
            return Fuzzer.check(
                false,
                "\(context) never reached the backend; the proxy answered \(answer.status.code) \(String(decoding: body ?? [], as: UTF8.self).prefix(500))"
            )
        }
        // The request as the backend saw it.
        Fuzzer.check(seen.method == request.method, "\(context): the backend saw \(seen.method)")
        // As sent, but for what a URL cannot hold as it is (`|`, `{`): escaped, and nothing else.
        let seenTarget = seen.path + (seen.query.map { "?" + $0 } ?? "")
        let expected = PercentEncoding.encodeURLTarget(target)
        Fuzzer.check(seenTarget == expected, "\(context): the backend saw \(seenTarget), not \(expected)")
        Fuzzer.check(
            seen.body == request.body, "\(context): the backend saw a body of \(seen.body.count) bytes, not \(request.body.count)"
        )
        let sent = endToEnd(request.headerFields, dropping: ["host", "content-length", "via", "forwarded"])
        let arrived = endToEnd(seen.headerFields, dropping: ["host", "content-length", "via", "forwarded"])
        for (name, values) in sent {
            Fuzzer.check(arrived[name] == values, "\(context): the backend saw \(name): \(arrived[name] ?? []), not \(values)")
        }
        for name in hopByHop.union(named(byConnectionIn: request.headerFields)) where name != "host" {
            // `Connection` aside: the client library says its own (`keep-alive`, `close`) to the backend.
            Fuzzer.check(
                name == "connection" || seen.headerFields.allSatisfy { $0.name.canonicalName.lowercased() != name },
                "\(context): the hop-by-hop field \(name) reached the backend")
        }
        // The answer as the client got it.
        Fuzzer.check(
            Int(answer.status.code) == plan.status,
            "\(context): answered \(answer.status.code) where the backend said \(plan.status)")
        let allowsBody = MockResponse.allowsBody(HTTPResponse.Status(code: plan.status)) && request.method != .head
        Fuzzer.check(
            body == (allowsBody ? plan.body : []),
            "\(context): answered \(body?.count ?? -1) bytes where the backend sent \(plan.body.count) (\(plan.status))")
        let planned = endToEnd(HTTPFields(plan.fields), dropping: ["content-length"])
        let got = endToEnd(answer.headerFields, dropping: ["content-length"])
        for (name, values) in planned {
            Fuzzer.check(
                got[name] == values,
                "\(context): answered \(answer.status.code) with \(name): \(got[name] ?? []) where the backend sent \(values) with \(plan.status)"
            )
        }
    }

    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer",
        "transfer-encoding", "upgrade",
    ]

    static func named(byConnectionIn fields: HTTPFields) -> Set<String> {
        Set(
            fields[values: .connection].flatMap { $0.split(separator: ",") }.map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            })
    }

    /// The end-to-end fields by lowercased name, their values in order.
    static func endToEnd(_ fields: HTTPFields, dropping: Set<String>) -> [String: [String]] {
        let dropped = hopByHop.union(named(byConnectionIn: fields)).union(dropping)
        var result: [String: [String]] = [:]
        for field in fields where !dropped.contains(field.name.canonicalName.lowercased()) {
            result[field.name.canonicalName.lowercased(), default: []].append(field.value)
        }
        return result
    }
}

/// What the backend answers next.
struct Plan: Sendable {
    var status: Int
    var fields: [HTTPField]
    var body: [UInt8]
}

/// The backend's one route: answers every path and method as planned, and notes the request.
final class Backend: MockRoutes {
    let plan = Mutex<Plan?>(nil)
    let seen = Mutex<MockRequest?>(nil)

    func endpoint(for request: MockRequest) throws -> MockEndpoint? {
        MockEndpoint(methods: [.get, .head, .post, .put, .patch, .delete]) { [self] request in
            seen.withLock { $0 = request }
            guard let plan = plan.withLock({ $0 }) else { return MockResponse(status: .internalServerError) }
            return MockResponse(
                status: HTTPResponse.Status(code: plan.status), headerFields: HTTPFields(plan.fields), body: plan.body)
        }
    }

    var routeTable: [RouteTableEntry] { [] }
}

/// A backend on loopback and a proxy to it, asked in process.
struct Harness: Sendable {
    let backend: Backend
    let proxy: MockServer

    static func start() async throws -> Harness {
        let backend = Backend()
        let server = try await MockServer(resources: [])
        server.addRoutes(backend)
        let port = try await server.start(host: "127.0.0.1", port: 0)
        let proxy = try await MockServer(resources: [])
        guard let upstream = URL(string: "http://127.0.0.1:\(port)") else { fatalError("no URL for port \(port)") }
        proxy.addRoutes(try ProxyRoutes(upstream: upstream), first: false)
        return Harness(backend: backend, proxy: proxy)
    }
}
