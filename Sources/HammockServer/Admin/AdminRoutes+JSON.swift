import Foundation
import HTTPTypes
import HammockJSON
import HammockStore
import HammockWire
import Synchronization

extension AdminRoutes {
    /// The query parameters `GET <prefix>/requests` takes.
    static let requestFilters = ["method", "path", "status", "since", "after", "limit", "redact"]

    /// The filters of `GET <prefix>/requests` and `<prefix>/events`.
    struct RequestFilter: Sendable {
        var pattern = RequestPattern()
        var since: Date?
        var after: UInt64 = 0
        var limit = Int.max

        func admits(_ entry: JournalEntry) -> Bool {
            entry.id > after && since.map { entry.time >= $0 } != false && pattern.matches(entry)
        }
    }

    /// `GET <prefix>/requests`: the journal's entries, oldest first, filtered.
    func listRequests(_ request: MockRequest, journal: RequestJournal) throws -> MockResponse {
        let filter = try Self.requestFilter(of: request)
        let redaction = try self.redaction(askedBy: request)
        var entries = journal.entries.filter(filter.admits)
        // The newest `limit`, still oldest first.
        if entries.count > filter.limit { entries.removeFirst(entries.count - filter.limit) }
        var fields = HTTPFields()
        fields[HTTPField.Name("X-Total-Count")!] = String(entries.count)
        return MockResponse(
            headerFields: fields, json: .array(entries.map { JournalJSON.entry($0, redacting: redaction) }))
    }

    /// What the journal's JSON hides: the server's ``Redaction``, or nothing with `?redact=false` (the
    /// caller holds the admin token, when one is set, and asked to see the secrets).
    func redaction(askedBy request: MockRequest) throws -> Redaction? {
        let items = try ListQuery.items(of: request.query ?? "")
        guard let item = items.last(where: { $0.name == "redact" }) else { return redaction }
        switch item.value {
        case "true", "": return redaction
        case "false": return nil
        default: throw HTTPProblem.badRequest("'redact' must be true or false; found '\(item.value.prefix(40))'")
        }
    }

    static func requestFilter(of request: MockRequest) throws -> RequestFilter {
        let items = try ListQuery.items(of: request.query ?? "")
        var filter = RequestFilter()
        for item in items {
            switch item.name {
            case "method":
                guard let method = HTTPRequest.Method(item.value.uppercased()) else {
                    throw HTTPProblem.badRequest("'method' must be an HTTP method, such as GET; found '\(item.value.prefix(40))'")
                }
                filter.pattern.method = method
            case "path":
                guard (try? PathPattern(item.value)) != nil else {
                    throw HTTPProblem.badRequest(
                        "'path' must be a path pattern such as /people/:id, /people/* or /files/**; found '\(item.value.prefix(200))'"
                    )
                }
                filter.pattern.path = item.value
            case "status":
                guard let status = Int(item.value), (100...599).contains(status) else {
                    throw HTTPProblem.badRequest(
                        "'status' must be a status code from 100 to 599; found '\(item.value.prefix(40))'")
                }
                filter.pattern.status = status
            case "since":
                guard let date = JournalJSON.parseTime(item.value) else {
                    throw HTTPProblem.badRequest(
                        "'since' must be an ISO 8601 time such as 2026-11-25T10:00:00Z; found '\(item.value.prefix(60))'")
                }
                filter.since = date
            case "after":
                guard let id = UInt64(item.value) else {
                    throw HTTPProblem.badRequest("'after' must be an entry number; found '\(item.value.prefix(40))'")
                }
                filter.after = id
            case "redact":
                continue  // read by `redaction(askedBy:)`
            case "limit":
                guard let count = Int(item.value), count >= 0 else {
                    throw HTTPProblem.badRequest("'limit' must be a number of entries; found '\(item.value.prefix(40))'")
                }
                filter.limit = count
            default:
                throw HTTPProblem.badRequest(
                    "Unknown filter '\(item.name.prefix(60))'; use \(Self.requestFilters.joined(separator: ", "))")
            }
        }
        return filter
    }

    /// How often the events stream sends a comment when nothing happens, so that proxies keep it open
    /// and a client that left is noticed.
    static let heartbeat = Duration.seconds(15)

    /// `GET <prefix>/events`: each new journal entry as a Server-Sent Event (`id`, `event: request`, or
    /// `event: webhook` for an attempt to deliver one, `event: websocket` for a WebSocket's message or end,
    /// `data` the entry's JSON), filtered as `requests` is; with `Last-Event-ID` (a reconnecting
    /// browser sends it) the kept entries after that one first. Ends when the client leaves or the
    /// server stops; a client that stops reading is sent `event: dropped` with the reason once it falls
    /// ``FeedBudget/perFeed`` bytes behind, and the stream ends (``JournalFeed``).
    func events(_ request: MockRequest, server: MockServer) throws -> MockResponse {
        var filter = try Self.requestFilter(of: request)
        let redaction = try self.redaction(askedBy: request)
        if let last = request.headerFields[HTTPField.Name("Last-Event-ID")!].flatMap({ UInt64($0) }) {
            filter.after = max(filter.after, last)
        }
        let journal = server.journal
        let stopSignal = server.stopSignal
        let budget = feeds
        let replaying = request.headerFields[HTTPField.Name("Last-Event-ID")!] != nil || filter.after > 0
        let admitted = filter
        let sleep = journal.sleep
        // Everything happens once the body is sent: a stream never sent (a HEAD, a client gone before
        // the head went out, an in-process caller that drops it) subscribes to nothing.
        let body = StreamingBody { writer in
            let feed = JournalFeed(budget: budget)
            // Subscribed before the replay is read: an entry recorded in between is in one or the other,
            // and the ids tell which.
            let subscription = journal.subscribe { entry in feed.offer(entry) }
            // The heartbeat and the server's stop reach the writer through the feed: one writer, in order.
            let helpers = Task {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        while !Task.isCancelled {
                            await sleep(Self.heartbeat)
                            guard !Task.isCancelled else { break }
                            feed.beat()
                        }
                    }
                    group.addTask {
                        await stopSignal.wait()
                        feed.finish()
                    }
                    await group.next()
                    group.cancelAll()
                }
            }
            defer {
                journal.unsubscribe(subscription)
                feed.close()
                helpers.cancel()
            }
            var opening = Array(": connected\n\n".utf8)
            var replayed = admitted.after
            if replaying {
                for entry in journal.entries where admitted.admits(entry) {
                    opening += Self.event(entry, redacting: redaction)
                    replayed = entry.id
                }
            }
            try await writer.write(opening)
            while true {
                switch await feed.next() {
                case .entry(let entry):
                    guard entry.id > replayed, admitted.admits(entry) else { continue }
                    try await writer.write(Self.event(entry, redacting: redaction))
                case .heartbeat:
                    try await writer.write(Array(": keepalive\n\n".utf8))
                case .overflowed(let reason):
                    journal.unsubscribe(subscription)
                    try await writer.write(
                        ServerSentEvent(event: "dropped", data: ["reason": .string(reason)], id: nil).encoded)
                    return
                case .finished:
                    return
                }
            }
        }
        let fields: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]
        return MockResponse(status: .ok, headerFields: fields, stream: body)
    }

    static func event(_ entry: JournalEntry, redacting redaction: Redaction?) -> [UInt8] {
        ServerSentEvent(
            event: entry.webhook != nil ? "webhook" : entry.webSocket != nil ? "websocket" : "request",
            data: JournalJSON.entry(entry, redacting: redaction),
            id: String(entry.id)
        ).encoded
    }

    /// `GET <prefix>/resources`: each resource's definition and how many records it has.
    func listResources(_ server: MockServer) async throws -> MockResponse {
        var resources: [JSON] = []
        for schema in server.schemas {
            var fields = JSONObject()
            for column in schema.columns { fields[column.name] = .string(column.type.rawValue) }
            var defaults = JSONObject()
            for field in schema.ruledFields { if let value = field.defaultValue { defaults[field.name] = value } }
            var made = JSONObject()
            for (name, value) in schema.resource.madeFields.sorted(by: { $0.key < $1.key }) {
                made[name] = value.configurationValue
            }
            var statuses = JSONObject()
            for (name, action) in MockResource.Actions.names {
                if let status = schema.resource.successStatuses[action] { statuses[name] = .integer(status) }
            }
            let count = try await server.store.count(of: schema)
            resources.append([
                "name": .string(schema.name), "primaryKey": .string(schema.key.name),
                "keyIsGenerated": .bool(schema.isKeyGenerated),
                "keyFormat": schema.resource.keyFormat?.configurationValue ?? .null,
                "keyReadOnly": .bool(schema.resource.keyIsReadOnly),
                "pageSize": schema.resource.defaultPageSize.map { .integer($0) } ?? .null,
                "omitsNulls": schema.resource.nullOmittedFields.map { .array($0.sorted().map(JSON.string)) }
                    ?? .bool(schema.resource.omitsNulls), "fields": .object(fields),
                "required": .array(schema.ruledFields.filter(\.isRequired).map { .string($0.name) }),
                "defaults": .object(defaults), "made": .object(made), "statuses": .object(statuses),
                "listEnvelope": schema.resource.listEnvelope?.configurationValue ?? .null,
                "topLevel": .bool(schema.resource.servesTopLevel), "answersKey": .bool(schema.resource.answersKey),
                "parents": .array(
                    schema.foreignKeys.map { key in
                        let cascades = schema.resource.parents.contains { $0.foreignKey == key.name && $0.deletesWithParent }
                        return [
                            "resource": .string(key.parent), "foreignKey": .string(key.name),
                            "onDelete": cascades ? "cascade" : "setNull",
                        ]
                    }),
                "count": .integer(count),
            ])
        }
        return MockResponse(json: .array(resources))
    }

    /// The most resources a server may have for the admin API to add one.
    static let maximumResources = 1_000

    /// `POST <prefix>/resources`: one resource in the configuration file's shape, served at once.
    func addResource(_ request: MockRequest, server: MockServer) async throws -> MockResponse {
        let body = try Self.jsonBody(of: request)
        let reader = Self.bodyReader
        let resource: MockResource
        do {
            resource = try reader.resource(body, at: "resource")
        } catch {
            throw HTTPProblem.badRequest(error.description)
        }
        guard server.schemas.count < Self.maximumResources else {
            throw HTTPProblem(.conflict, detail: "The server serves at most \(Self.maximumResources) resources added this way")
        }
        if let admin = server.options.adminPath, owns((server.options.basePath ?? "") + "/" + resource.name) {
            throw HTTPProblem.badRequest("A resource named '\(resource.name)' would lie under \(admin), the admin API's prefix")
        }
        do {
            try await server.addResource(resource)
        } catch let error as SchemaError {
            throw HTTPProblem(.conflict, detail: error.description)
        }
        var response = try await listResources(server)
        response.status = .created
        return response
    }

    static func json(_ row: RouteTableEntry) -> JSON {
        var object: JSONObject = [
            "methods": .array(row.methods.map { .string($0.rawValue) }), "pattern": .string(row.pattern),
        ]
        if let resource = row.resource { object["resource"] = .string(resource) }
        return .object(object)
    }

    /// The most routes the admin API adds.
    static let maximumAddedRoutes = 1_000
    /// The most bytes of route descriptions the admin API keeps: 16 MiB, the journal's own budget (150
    /// routes of 1 MiB each held 291 MB before this bound).
    static let maximumAddedRouteBytes = 16 << 20

    /// `POST <prefix>/routes`: one route, or an array of them, in the configuration file's shape; each
    /// answered before the resources' routes from now on. Answers the numbers they were added under.
    func addRoutes(_ request: MockRequest, server: MockServer) throws -> MockResponse {
        let body = try Self.jsonBody(of: request)
        let reader = Self.bodyReader
        var stubs: [StubRoute] = []
        do {
            if case .array = body {
                stubs = try reader.routes(body)
            } else {
                stubs = [try reader.route(body, at: "route")]
            }
        } catch {
            throw HTTPProblem.badRequest(error.description)
        }
        // Every request walks the routes of your own: a client adding without end would slow them all,
        // and each holds its answers in memory. Both bounds are checked and the routes added in one step.
        let bytes = max(request.body.count, 1)
        let ids = try addedRoutes.withLock { added throws(HTTPProblem) -> [Int] in
            guard added.count + stubs.count <= Self.maximumAddedRoutes else {
                throw HTTPProblem(
                    .conflict,
                    detail: "The admin API keeps at most \(Self.maximumAddedRoutes) routes it added; DELETE some first")
            }
            let held = added.reduce(0) { $0 + $1.bytes }
            guard held + bytes <= Self.maximumAddedRouteBytes else {
                throw HTTPProblem(
                    .conflict,
                    detail: "The routes the admin API added hold \(held) bytes, and it keeps at most "
                        + "\(Self.maximumAddedRouteBytes); DELETE some first")
            }
            let ids = server.addStubs(stubs)
            // The body's bytes shared among the routes it added, so deleting one gives back its part.
            let share = bytes / max(ids.count, 1)
            added += ids.enumerated().map { index, id in
                (id, index == 0 ? bytes - share * (ids.count - 1) : share)
            }
            return ids
        }
        return MockResponse(status: .created, json: ["ids": .array(ids.map(JSON.integer))])
    }

    /// `PUT <prefix>/latency`: `{"min": 0.1, "max": 0.5}` in seconds, as in a configuration file, or
    /// `null` for none.
    static func latency(from request: MockRequest) throws -> Latency? {
        let body = try jsonBody(of: request)
        let reader = Self.bodyReader
        do {
            return try reader.latency(body, at: "latency")
        } catch {
            throw HTTPProblem.badRequest(error.description)
        }
    }

    static func json(_ latency: Latency?) -> JSON {
        guard let latency else { return .null }
        func seconds(_ duration: Duration) -> JSON {
            let (whole, fraction) = duration.components
            return .double(Double(whole) + Double(fraction) / 1e18)
        }
        return ["min": seconds(latency.minimum), "max": seconds(latency.maximum)]
    }

    /// Reads a request body's JSON as a configuration file's, its errors naming the body.
    static var bodyReader: ConfigurationReader {
        ConfigurationReader { keyPath, message in ConfigurationError(file: "request body", keyPath: keyPath, message: message) }
    }

    static func jsonBody(of request: MockRequest) throws -> JSON {
        do {
            return try JSON(parsing: request.body)
        } catch {
            throw HTTPProblem.badRequest("The body is not JSON: \(error.description)")
        }
    }
}

/// The journal's entries as JSON, the shape `GET /__hammock/requests` answers (see docs/server.md).
enum JournalJSON {
    static func entry(_ entry: JournalEntry, redacting redaction: Redaction?) -> JSON {
        var request: JSONObject = [
            "method": .string(entry.method.rawValue), "path": .string(entry.path),
            "query": entry.query.map(JSON.string) ?? .null, "headers": headers(entry.headerFields, redacting: redaction),
            "bodySize": .integer(entry.body.count),
        ]
        body(entry.body, type: entry.headerFields[.contentType], into: &request)
        let response: JSONObject = [
            "status": .integer(entry.status.code), "headers": headers(entry.responseHeaderFields, redacting: redaction),
            "bodySize": .integer(entry.responseBodySize),
        ]
        var route = JSON.null
        if let matched = entry.route {
            var object: JSONObject = ["kind": .string(matched.kind.rawValue), "pattern": .string(matched.pattern)]
            if let resource = matched.resource { object["resource"] = .string(resource) }
            route = .object(object)
        }
        let (seconds, attoseconds) = entry.duration.components
        return [
            "id": .integer(Int(clamping: entry.id)), "time": .string(formatTime(entry.time)),
            "durationMs": .double((Double(seconds) * 1000 + Double(attoseconds) / 1e15 * 1000).rounded() / 1000),
            "peer": entry.peer.map(JSON.string) ?? .null, "refused": .bool(entry.isRefused), "route": route,
            "fault": entry.fault.map(JSON.string) ?? .null,
            "request": .object(request), "response": .object(response),
            "webhook": entry.webhook.map { attempt in
                [
                    "name": .string(attempt.name), "attempt": .integer(attempt.attempt), "url": .string(attempt.url),
                    "error": attempt.error.map(JSON.string) ?? .null,
                ]
            } ?? .null,
            "webSocket": entry.webSocket?.json ?? .null,
        ]
    }

    /// Header fields as an object of lowercased names: a string for one value, an array for several
    /// (so `Set-Cookie` lines stay apart).
    static func headers(_ fields: HTTPFields, redacting redaction: Redaction?) -> JSON {
        var object = JSONObject()
        for field in fields {
            let name = field.name.canonicalName
            let value = redaction?.value(field.value, named: name) ?? field.value
            switch object[name] {
            case nil: object[name] = .string(value)
            case .string(let first)?: object[name] = .array([.string(first), .string(value)])
            case .array(var values)?:
                values.append(.string(value))
                object[name] = .array(values)
            default: break
            }
        }
        return .object(object)
    }

    /// `body` and `bodyEncoding`: JSON as itself when the content type says JSON and it parses, text
    /// when it is UTF-8, else base64. No body, no members.
    static func body(_ bytes: [UInt8], type: String?, into object: inout JSONObject) {
        guard !bytes.isEmpty else { return }
        if type.map({ HeaderValue.mediaType(of: $0) })?.contains("json") ?? false, let json = try? JSON(parsing: bytes) {
            object["body"] = json
            object["bodyEncoding"] = "json"
        } else if let text = String(validating: bytes, as: UTF8.self) {
            object["body"] = .string(text)
            object["bodyEncoding"] = "text"
        } else {
            object["body"] = .string(Base64.encode(bytes))
            object["bodyEncoding"] = "base64"
        }
    }

    static func formatTime(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// An ISO 8601 time, with or without fractional seconds; `nil` if it is not one.
    static func parseTime(_ text: String) -> Date? {
        guard text.utf8.count <= 64 else { return nil }
        return (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
            ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}
