import Foundation
import HTTPTypes
public import HammockJSON
import HammockServer
import HammockStore
import HammockWire

/// HTTP Archive 1.2, the format browsers' developer tools, mitmproxy and Charles export: a recording
/// written as one, and one read as a configuration whose stubs answer its requests in order.
///
/// ```swift
/// let har = try HTTPArchive.read(contentsOfFile: "session.har")
/// let server = try await MockServer.inMemory(try ServerConfiguration(root: har.configuration, file: "session.har"))
/// ```
/// `hammock serve session.har` does the same. A HAR from a browser holds every origin the page reached
/// (fonts, analytics, the API): the origin with the most entries is served, and the others are counted.
/// WebSockets are read and written as Chromium's developer tools keep them: an entry answered `101`
/// whose `_webSocketMessages` list what was sent and received, played back as a route that sends what
/// was received, each after the client's message before it.
public enum HTTPArchive {
    /// Why a file is not a HAR the mock can serve.
    public struct ReadError: Error, Sendable, CustomStringConvertible {
        /// What is wrong, and where.
        public var description: String
    }

    /// A HAR read as a configuration.
    public struct Read: Sendable {
        /// The configuration: a memory store and a stub per distinct request.
        public var configuration: JSON
        /// The origin served (`https://api.example.test`), if any entry had one.
        public var origin: String?
        /// What was made, and how many entries were left out (another origin, an unusable URL or body).
        public var summary: ProxyRecording.Summary
    }

    /// The most entries read: a browser session of a few hours has a few thousand.
    static let maximumEntries = 100_000
    /// The largest file read: 512 MiB, a long session with its images.
    static let maximumFileSize = 512 << 20

    /// Reads the HAR at `path`.
    /// - Throws: ``ReadError`` when the file cannot be read or is not HAR.
    public static func read(contentsOfFile path: String, inferringResources: Bool = false) throws(ReadError) -> Read {
        let bytes: [UInt8]
        do {
            // As a configuration is read: a FIFO put in the file's place is refused, not waited on for good.
            bytes = try FileContents.read(path, limit: maximumFileSize)
        } catch {
            throw ReadError(description: "\(path): cannot read the file: \(error.reason)")
        }
        return try read(bytes, file: path, inferringResources: inferringResources)
    }

    /// Reads HAR bytes; `file` names them in errors. With `inferringResources`, collections become
    /// resources as a recording's do; by default every entry is a stub (a replay answers as recorded).
    /// - Throws: ``ReadError`` for bytes that are not a HAR document.
    public static func read(_ bytes: [UInt8], file: String, inferringResources: Bool = false) throws(ReadError) -> Read {
        let root: JSON
        do {
            root = try JSON(parsing: bytes)
        } catch {
            throw ReadError(description: "\(file): not JSON: \(error)")
        }
        guard case .array(let entries)? = root["log"]?["entries"] else {
            throw ReadError(description: "\(file): not a HAR file (no log.entries)")
        }
        guard entries.count <= maximumEntries else {
            throw ReadError(description: "\(file): \(entries.count) entries; at most \(maximumEntries) are read")
        }
        var parsed: [(origin: String, exchange: ProxyRecording.Exchange)] = []
        var sockets: [(origin: String, session: ProxyRecording.WebSocketSession)] = []
        var skipped = 0
        for entry in entries {
            if let socket = session(of: entry) {
                sockets.append(socket)
            } else if let exchange = exchange(of: entry) {
                parsed.append(exchange)
            } else {
                skipped += 1
            }
        }
        var counts: [String: Int] = [:]
        for origin in parsed.map(\.origin) + sockets.map(\.origin) { counts[origin, default: 0] += 1 }
        // The origin with the most entries; the first one seen among equals.
        let origin = (parsed.map(\.origin) + sockets.map(\.origin)).first { counts[$0] == counts.values.max() }
        let served = parsed.filter { $0.origin == origin }.map(\.exchange)
        let servedSockets = sockets.filter { $0.origin == origin }.map(\.session)
        skipped += parsed.count - served.count + sockets.count - servedSockets.count
        var builder = RecordingBuilder(exchanges: served, sessions: servedSockets)
        if inferringResources { builder.inferResources() }
        let (configuration, resources, stubs, unnamed) = builder.build()
        var summary = ProxyRecording.Summary(
            exchanges: served.count, resources: resources, stubs: stubs, skipped: skipped + unnamed)
        summary.webSockets = builder.webSocketsWritten
        return Read(configuration: configuration, origin: origin, summary: summary)
    }

    /// The fields a HAR's decoded body makes untrue (its text is the body after decoding) or a replay
    /// makes its own; HTTP/2's pseudo-fields (`:authority`) are no header fields at all.
    static let droppedOnImport: Set<String> = ProxyRecording.unrecorded.union(["content-encoding"])

    /// One entry as an exchange, with its origin; `nil` when it cannot be one.
    static func exchange(of entry: JSON) -> (origin: String, exchange: ProxyRecording.Exchange)? {
        guard let request = entry["request"], let response = entry["response"],
            let method = request["method"]?.stringValue.flatMap({ HTTPRequest.Method($0.uppercased()) }),
            let url = request["url"]?.stringValue.flatMap(EntryURL.init),
            let status = response["status"]?.intValue
        else { return nil }
        let (origin, path) = ("\(url.scheme)://\(url.authority)", url.path)
        let requestHeaders = fields(request["headers"], dropping: [])
        let postData = request["postData"]
        let requestType = postData?["mimeType"]?.stringValue ?? requestHeaders.first { $0.name == .contentType }?.value
        let requestBody = postData?["text"]?.stringValue.map { Array($0.utf8) } ?? []
        var responseHeaders = fields(response["headers"], dropping: droppedOnImport)
        let content = response["content"]
        var body: [UInt8] = []
        if let text = content?["text"]?.stringValue {
            if content?["encoding"]?.stringValue?.lowercased() == "base64" {
                guard let bytes = Base64.decode(text) else { return nil }
                body = bytes
            } else {
                body = Array(text.utf8)
            }
        }
        if !responseHeaders.contains(where: { $0.name == .contentType }), !body.isEmpty,
            let type = content?["mimeType"]?.stringValue, !type.isEmpty
        {
            responseHeaders.append(HTTPField(name: .contentType, value: type))
        }
        var exchange = ProxyRecording.Exchange(
            method: method, path: path, query: url.query, requestHeaders: requestHeaders,
            requestContentType: requestType, requestBody: requestBody, status: status, responseHeaders: responseHeaders,
            responseBody: body)
        if let started = entry["startedDateTime"]?.stringValue, let date = ISO8601.date(started) { exchange.startedAt = date }
        exchange.duration = (entry["time"]?.doubleValue ?? 0) / 1000
        return (origin, exchange)
    }

    /// The most messages read of one WebSocket entry.
    static let maximumMessages = 100_000

    /// One WebSocket entry (answered `101`, with `_webSocketMessages`) as a session, with its origin;
    /// `nil` when the entry is not one. Chromium keeps no close frames, so a session read ends open.
    static func session(of entry: JSON) -> (origin: String, session: ProxyRecording.WebSocketSession)? {
        guard let response = entry["response"], response["status"]?.intValue == 101,
            case .array(let list)? = entry["_webSocketMessages"], list.count <= maximumMessages,
            let request = entry["request"], let url = request["url"]?.stringValue.flatMap(EntryURL.init)
        else { return nil }
        // A page's socket is `ws://` or `wss://`; the origin its HTTP entries have is `http(s)://`.
        let web = url.scheme == "wss" ? "https" : url.scheme == "ws" ? "http" : url.scheme
        let origin = "\(web)://\(url.authority)"
        let started = entry["startedDateTime"]?.stringValue.flatMap(ISO8601.date)
        var moments: [ProxyRecording.WebSocketSession.Moment] = []
        for message in list {
            guard let type = message["type"]?.stringValue, let data = message["data"]?.stringValue else { continue }
            let content: WebSocketMessage
            switch message["opcode"]?.intValue ?? 1 {
            case 1: content = .text(data)
            case 2:
                guard let bytes = Base64.decode(data) else { continue }
                content = .binary(bytes)
            default: continue
            }
            // Chromium writes each message's time in seconds since 1970; the session starts at the entry's.
            let seconds =
                (message["time"]?.doubleValue).map { time in
                    started.map { max(time - $0.timeIntervalSince1970, 0) } ?? 0
                } ?? 0
            let at = Duration.milliseconds(Int64(min(seconds, 86_400 * 365) * 1000))
            switch type {
            case "send": moments.append(.init(event: .fromClient(content), at: at))
            case "receive": moments.append(.init(event: .fromUpstream(content), at: at))
            default: continue
            }
        }
        let responseHeaders = fields(response["headers"], dropping: droppedOnImport).filter {
            !ProxyRoutes.webSocketHopFields.contains($0.name.canonicalName.lowercased())
                && !["upgrade", "sec-websocket-protocol"].contains($0.name.canonicalName.lowercased())
        }
        let subprotocol = response["headers"].flatMap { headers in
            fields(headers, dropping: []).first { $0.name.canonicalName.lowercased() == "sec-websocket-protocol" }?.value
        }
        let session = ProxyRecording.WebSocketSession(
            path: url.path, query: url.query, requestHeaders: fields(request["headers"], dropping: []),
            responseHeaders: responseHeaders, subprotocol: subprotocol, moments: moments,
            startedAt: started ?? Date(timeIntervalSince1970: 0))
        return (origin, session)
    }

    /// A HAR header list as fields: names that are not field names (`:authority`) are left out.
    static func fields(_ list: JSON?, dropping dropped: Set<String>) -> [HTTPField] {
        guard case .array(let elements)? = list else { return [] }
        return elements.compactMap { element in
            guard let name = element["name"]?.stringValue, let value = element["value"]?.stringValue,
                !dropped.contains(name.lowercased()), let fieldName = HTTPField.Name(name)
            else { return nil }
            return HTTPField(name: fieldName, value: value)
        }
    }

    /// A HAR 1.2 document of `exchanges` and WebSocket `sessions`, their requests addressed to `host` (the
    /// mock's, as the app sent them, so that reading the file back serves the same paths).
    static func document(
        of exchanges: [ProxyRecording.Exchange], sessions: [ProxyRecording.WebSocketSession] = [], creatorVersion: String
    ) -> JSON {
        var entries = exchanges.map { exchange -> JSON in
            let host = exchange.requestHeaders.first { $0.name.canonicalName.lowercased() == "host" }?.value ?? "localhost"
            let url = "http://\(host)\(exchange.path)" + (exchange.query.map { "?" + $0 } ?? "")
            var request: JSONObject = [
                "method": .string(exchange.method.rawValue), "url": .string(url), "httpVersion": "HTTP/1.1",
                "cookies": [], "headers": headerList(exchange.requestHeaders), "queryString": queryList(exchange.query),
                "headersSize": -1, "bodySize": .integer(exchange.requestBody.count),
            ]
            if !exchange.requestBody.isEmpty {
                var post: JSONObject = ["mimeType": .string(exchange.requestContentType ?? "")]
                if let text = String(validating: exchange.requestBody, as: UTF8.self) {
                    post["text"] = .string(text)
                } else {
                    // HAR's postData has no encoding; the underscore marks a field of this writer's own.
                    post["text"] = .string(Base64.encode(exchange.requestBody))
                    post["_encoding"] = "base64"
                }
                request["postData"] = .object(post)
            }
            let type = exchange.responseHeaders.first { $0.name == .contentType }?.value ?? ""
            var content: JSONObject = ["size": .integer(exchange.responseBody.count), "mimeType": .string(type)]
            if !exchange.responseBody.isEmpty {
                if let text = String(validating: exchange.responseBody, as: UTF8.self) {
                    content["text"] = .string(text)
                } else {
                    content["text"] = .string(Base64.encode(exchange.responseBody))
                    content["encoding"] = "base64"
                }
            }
            let status = HTTPResponse.Status(code: exchange.status)
            let response: JSONObject = [
                "status": .integer(exchange.status), "statusText": .string(status.reasonPhrase), "httpVersion": "HTTP/1.1",
                "cookies": [], "headers": headerList(exchange.responseHeaders), "content": .object(content),
                "redirectURL": .string(exchange.responseHeaders.first { $0.name == .location }?.value ?? ""),
                "headersSize": -1, "bodySize": .integer(exchange.responseBody.count),
            ]
            let milliseconds = (exchange.duration * 1000 * 1000).rounded() / 1000
            return [
                "startedDateTime": .string(ISO8601.string(exchange.startedAt)), "time": .double(milliseconds),
                "request": .object(request), "response": .object(response), "cache": [:],
                "timings": ["send": 0, "wait": .double(milliseconds), "receive": 0],
            ]
        }
        entries += sessions.map(entry(of:))
        return [
            "log": [
                "version": "1.2", "creator": ["name": "hammock", "version": .string(creatorVersion)],
                "entries": .array(entries),
            ]
        ]
    }

    /// A WebSocket session as Chromium's developer tools write one: an entry answered `101` whose
    /// `_webSocketMessages` are what the client sent (`send`) and received (`receive`), with their times.
    /// A close or cut of the backend's is not in that format and is left out.
    static func entry(of session: ProxyRecording.WebSocketSession) -> JSON {
        let host = session.requestHeaders.first { $0.name.canonicalName.lowercased() == "host" }?.value ?? "localhost"
        let url = "ws://\(host)\(session.path)" + (session.query.map { "?" + $0 } ?? "")
        let start = session.startedAt.timeIntervalSince1970
        let messages = session.moments.compactMap { moment -> JSON? in
            let type: String
            let message: WebSocketMessage
            switch moment.event {
            case .fromClient(let sent):
                type = "send"
                message = sent
            case .fromUpstream(let received):
                type = "receive"
                message = received
            case .upstreamClosed, .upstreamDropped: return nil
            }
            let (opcode, data): (Int, String) =
                switch message {
                case .text(let text): (1, text)
                case .binary(let bytes): (2, Base64.encode(bytes))
                }
            let time = start + ProxyRecording.seconds(moment.at)
            return ["type": .string(type), "time": .double(time), "opcode": .integer(opcode), "data": .string(data)]
        }
        var responseHeaders = session.responseHeaders
        if let subprotocol = session.subprotocol {
            responseHeaders.append(HTTPField(name: .secWebSocketProtocol, value: subprotocol))
        }
        let request: JSONObject = [
            "method": "GET", "url": .string(url), "httpVersion": "HTTP/1.1", "cookies": [],
            "headers": headerList(session.requestHeaders), "queryString": queryList(session.query), "headersSize": -1,
            "bodySize": 0,
        ]
        let response: JSONObject = [
            "status": 101, "statusText": "Switching Protocols", "httpVersion": "HTTP/1.1", "cookies": [],
            "headers": headerList(responseHeaders), "content": ["size": 0, "mimeType": "x-unknown"], "redirectURL": "",
            "headersSize": -1, "bodySize": 0,
        ]
        let duration = session.moments.last.map { ProxyRecording.seconds($0.at) * 1000 } ?? 0
        return [
            "startedDateTime": .string(ISO8601.string(session.startedAt)), "time": .double(duration),
            "request": .object(request), "response": .object(response), "cache": [:],
            "timings": ["send": 0, "wait": 0, "receive": 0], "_resourceType": "websocket",
            "_webSocketMessages": .array(messages),
        ]
    }

    static func headerList(_ fields: [HTTPField]) -> JSON {
        .array(fields.map { ["name": .string($0.name.canonicalName), "value": .string($0.value)] })
    }

    /// The query's items, decoded, as HAR lists them beside the URL.
    static func queryList(_ query: String?) -> JSON {
        guard let query, !query.isEmpty else { return [] }
        return .array(
            query.split(separator: "&").map { item -> JSON in
                let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
                let value = parts.count == 2 ? String(parts[1]).removingPercentEncoding ?? String(parts[1]) : ""
                return ["name": .string(name), "value": .string(value)]
            })
    }
}

/// RFC 3339 times with milliseconds, as HAR writes them.
enum ISO8601 {
    static func string(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }

    static func date(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)) {
            return date
        }
        return try? Date(text, strategy: .iso8601)
    }
}

/// An entry's URL split as a request line carries it. Read by hand rather than through `URLComponents`,
/// which percent-encodes the whole string again (`%20` becoming `%2520`) when one character is outside
/// RFC 3986, as `[` and `]` in `filter[name]=a%20b` are; browsers and servers send those as they are.
/// Bytes no request line can carry (spaces, controls, non-ASCII) are percent-encoded; the rest is kept.
struct EntryURL {
    /// `http`, `https`, `ws` or `wss`, lowercased.
    var scheme: String
    /// `host` or `host:port`, as written (user information left out).
    var authority: String
    /// The path, `/` when the URL has none.
    var path: String
    /// The query after `?`, without the fragment.
    var query: String?

    init?(_ url: String) {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        var rest = url[schemeEnd.upperBound...]
        if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        guard !authority.isEmpty, !authority.hasPrefix(":"),
            authority.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "\\" })
        else { return nil }
        self.authority = String(authority)
        let target = rest[authorityEnd...]
        let queryStart = target.firstIndex(of: "?")
        let path = queryStart.map { target[..<$0] } ?? target
        self.path = path.isEmpty ? "/" : PercentEncoding.encodeRequestTarget(path)
        query = queryStart.map { PercentEncoding.encodeRequestTarget(target[target.index(after: $0)...]) }
    }
}
