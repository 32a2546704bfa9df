import Foundation
import HTTPTypes
import HammockJSON
import HammockServer
import HammockStore
import HammockWire

/// Turns recorded exchanges into a configuration: the exchanges that look like one collection (`GET
/// /people` a list of objects, `GET /people/3` an object whose key is 3, `POST /people` the object made)
/// become a resource whose records are the last state seen of each; the rest become stubs, one per
/// distinct request (method, path, query, JSON body), answering in the order recorded.
struct RecordingBuilder {
    typealias Exchange = ProxyRecording.Exchange

    let exchanges: [Exchange]
    /// The WebSocket sessions relayed, written as routes that play them back.
    let sessions: [ProxyRecording.WebSocketSession]
    /// Exchanges a resource answers now (by index): not written as stubs.
    var absorbed: Set<Int> = []
    /// The resources inferred, in the order their collections were first seen.
    var resources: [Collection] = []
    /// The prefix the resources are served under (`basePath`), if any.
    var basePath = ""

    init(exchanges: [Exchange], sessions: [ProxyRecording.WebSocketSession] = []) {
        self.exchanges = exchanges
        self.sessions = sessions
    }

    /// A collection the exchanges show: where it lives, its key member, and the records seen.
    struct Collection {
        var path: String
        var name: String
        var key: String
        /// Records by key (the key's JSON text), in the order first seen; a deleted one is `nil`.
        var order: [String] = []
        var records: [String: JSONObject?] = [:]
        var members: [String] = []
        /// The collection this one's records belong to, and the member that holds its key, when the
        /// exchanges showed it (`GET /people/3/cars` listing cars whose `person_id` is 3).
        var parent: (name: String, foreignKey: String)?
        /// The exchanges it answers, by index; those at its nested paths (`/people/3/cars`) apart.
        var positions: Set<Int> = []
        var nestedPositions: Set<Int> = []
        /// Seen only under its parent's records: no exchange of its own path made it a collection.
        var isNestedOnly = false

        mutating func keep(_ record: JSONObject) {
            guard let value = record[key], let text = RecordingBuilder.keyText(value) else { return }
            if records[text] == nil { order.append(text) }
            records[text] = .some(record)
            for member in record.keys where !members.contains(member) { members.append(member) }
        }

        mutating func remove(_ text: String) {
            if records[text] != nil { records[text] = .some(nil) }
        }
    }

    /// `3` or `"a1"` as the text a path segment holds.
    static func keyText(_ value: JSON) -> String? {
        switch value {
        case .integer(let number): String(number)
        case .string(let text) where !text.isEmpty: text
        default: nil
        }
    }

    /// A member name a configuration can declare as a resource name: letters, digits, `_` and `-`.
    static func isName(_ text: Substring) -> Bool {
        !text.isEmpty && text.count <= 64
            && text.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-")
            }
            && !(text.first?.isNumber ?? true)
    }

    /// The answer's body as JSON, when it says it is JSON and is.
    static func json(_ exchange: Exchange) -> JSON? {
        let type = exchange.responseHeaders.first { $0.name == .contentType }?.value
        guard ProxyRecording.isJSON(ProxyRecording.mediaType(type)), !exchange.responseBody.isEmpty else { return nil }
        return try? JSON(parsing: exchange.responseBody)
    }

    /// Finds the collections: first the key member of each candidate path, then its records.
    mutating func inferResources() {
        // Candidate collection paths and the key each suggests, from answers of 2xx.
        var keys: [String: String] = [:]
        var firstSeen: [String] = []
        func note(_ path: String, key: String?) {
            if !firstSeen.contains(path) { firstSeen.append(path) }
            if let key, keys[path] == nil { keys[path] = key }
        }
        for exchange in exchanges where (200..<300).contains(exchange.status) {
            guard let body = Self.json(exchange) else { continue }
            let (parent, last) = Self.split(exchange.path)
            switch (exchange.method, body) {
            case (.get, .array(let elements)) where exchange.query == nil:
                guard !elements.isEmpty, let objects = Self.objects(elements) else { continue }
                note(exchange.path, key: objects.allSatisfy { $0["id"].flatMap(Self.keyText) != nil } ? "id" : nil)
            case (.post, .object(let object)):
                note(exchange.path, key: object["id"].flatMap(Self.keyText) != nil ? "id" : nil)
            case (.get, .object(let object)), (.put, .object(let object)), (.patch, .object(let object)):
                guard let parent, let last else { continue }
                let segment = PercentEncoding.decode(last) ?? String(last)
                if object["id"].flatMap(Self.keyText) == segment {
                    note(parent, key: "id")
                } else if let member = object.first(where: { Self.keyText($0.value) == segment })?.key {
                    note(parent, key: member)
                }
            default:
                continue
            }
        }
        // A collection lives at a literal path whose last segment names it, under one shared prefix.
        var candidates: [Collection] = []
        for path in firstSeen {
            guard let key = keys[path] else { continue }
            let (parent, last) = Self.split(path)
            guard let last, Self.isName(last) else { continue }
            // Nested under another candidate's records (`/people/3/cars`): left to stubs for now.
            if let parent, candidates.contains(where: { parent.hasPrefix($0.path + "/") }) { continue }
            // Names are unique ignoring case, as the configuration reader wants them (SQLite's tables
            // ignore case): `/peoPle` beside `/people` stays stubs.
            guard !candidates.contains(where: { Self.sameName($0.name, String(last)) }) else { continue }
            candidates.append(Collection(path: path, name: String(last), key: key))
        }
        guard !candidates.isEmpty else { return }
        // The prefix most of them share; a stub must sit under it too (the base path applies to all).
        var prefixes: [String: Int] = [:]
        for candidate in candidates { prefixes[Self.split(candidate.path).parent ?? "", default: 0] += 1 }
        let prefix = prefixes.max { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key }?.key ?? ""
        // It must also be a base path the reader takes (no `//`, `%` or space) and not the admin API's.
        let usable = MockServer.Options.isValidBasePath(prefix) && !Self.isAdmin(prefix)
        if !prefix.isEmpty, !usable || !exchanges.allSatisfy({ $0.path.hasPrefix(prefix + "/") }) {
            candidates.removeAll { Self.split($0.path).parent != nil && Self.split($0.path).parent != "" }
            basePath = ""
        } else {
            candidates.removeAll { (Self.split($0.path).parent ?? "") != prefix }
            basePath = prefix
        }
        let nested = nestedCollections(under: candidates)
        for child in nested {
            if let index = candidates.firstIndex(where: { $0.name == child.name }) {
                // `/cars` was seen too: the link is news, if the records are keyed alike.
                if candidates[index].key == child.key { candidates[index].parent = child.parent }
            } else if candidates.contains(where: { Self.sameName($0.name, child.name) }) {
                continue  // `/people/3/Cars` beside `/cars`: left to stubs
            } else {
                candidates.append(child)
            }
        }
        // The records: each collection's exchanges in order, the latest state of each record kept.
        for index in candidates.indices {
            var collection = candidates[index]
            for (position, exchange) in exchanges.enumerated() {
                let (parent, last) = Self.split(exchange.path)
                let onCollection = exchange.path == collection.path
                let onRecord = parent == collection.path && last != nil
                if let link = collection.parent, let parent, last.map(String.init) == collection.name,
                    let (above, _) = Self.parentRecord(parent), above == Self.sibling(of: collection.path, named: link.name)
                {
                    // `/people/3/cars`: a list of the parent's children, or one created under it.
                    guard (200..<300).contains(exchange.status) else { continue }
                    switch (exchange.method, Self.json(exchange)) {
                    case (.get, .array(let elements)?) where exchange.query == nil:
                        guard let objects = Self.objects(elements) else { continue }
                        for object in objects { collection.keep(object) }
                    case (.post, .object(let object)?):
                        collection.keep(object)
                    default:
                        continue
                    }
                    collection.nestedPositions.insert(position)
                    continue
                }
                guard onCollection || onRecord else { continue }
                // A missing record or a refused body: the resource answers those itself, in its own words.
                if [404, 409, 422].contains(exchange.status) {
                    collection.positions.insert(position)
                    continue
                }
                let body = Self.json(exchange)
                switch exchange.method {
                case .get where onCollection && exchange.query == nil:
                    guard case .array(let elements)? = body, let objects = Self.objects(elements) else { continue }
                    guard objects.allSatisfy({ $0[collection.key].flatMap(Self.keyText) != nil }) else { continue }
                    for object in objects { collection.keep(object) }
                case .post where onCollection:
                    guard case .object(let object)? = body, object[collection.key].flatMap(Self.keyText) != nil else { continue }
                    collection.keep(object)
                case .get, .put, .patch:
                    guard onRecord, case .object(let object)? = body, object[collection.key].flatMap(Self.keyText) != nil
                    else { continue }
                    collection.keep(object)
                case .delete where onRecord:
                    guard (200..<300).contains(exchange.status), let last else { continue }
                    collection.remove(PercentEncoding.decode(last) ?? String(last))
                default:
                    continue
                }
                if (200..<300).contains(exchange.status) { collection.positions.insert(position) }
            }
            candidates[index] = collection
        }
        // A collection whose records hold nothing but their generated key (`[{"id": 1}]`) declares no field,
        // which the reader refuses (such a resource could never be written): its exchanges stay stubs, and
        // a child linked to it loses the link.
        let declarable = Self.linkedWhereSound(candidates).filter { collection in
            Self.declaration(of: collection)["fields"]?.objectValue?.isEmpty == false
        }
        // Parents before their children, as a configuration's data loads.
        let linked = Self.linkedWhereSound(declarable)
        resources = linked.filter { $0.parent == nil } + linked.filter { $0.parent != nil }
        for collection in resources { absorbed.formUnion(collection.positions.union(collection.nestedPositions)) }
    }

    /// The parent collection's path and the record's key in `path` (`/api/people/3` → `/api/people`, `3`).
    static func parentRecord(_ path: String) -> (String, String)? {
        let (above, key) = split(path)
        guard let above, let key else { return nil }
        return (above, PercentEncoding.decode(key) ?? String(key))
    }

    /// The path of the collection `name` beside the one at `path` (`/api/cars`, `people` → `/api/people`).
    static func sibling(of path: String, named name: String) -> String {
        (split(path).parent ?? "") + "/" + name
    }

    /// The collections nested lists show under `parents`' records: `GET /people/3/cars` answering objects
    /// with keys, each holding 3 in the same member (the foreign key), or a `POST` there answering one. A
    /// child the lists disagree on, or whose records hold no member with the parent's key, is left to stubs.
    func nestedCollections(under parents: [Collection]) -> [Collection] {
        struct Seen {
            var parent: String
            var foreignKeys: [String]?
            var key: String?
            var allKeyed = true
        }
        var seen: [String: Seen] = [:]
        var order: [String] = []
        for exchange in exchanges where (200..<300).contains(exchange.status) {
            let (above, last) = Self.split(exchange.path)
            guard let above, let last, Self.isName(last), let (parentPath, parentKey) = Self.parentRecord(above),
                let parent = parents.first(where: { $0.path == parentPath })
            else { continue }
            let objects: [JSONObject]
            switch (exchange.method, Self.json(exchange)) {
            case (.get, .array(let elements)?) where exchange.query == nil:
                guard let found = Self.objects(elements) else { continue }
                objects = found
            case (.post, .object(let object)?):
                objects = [object]
            default:
                continue
            }
            let name = String(last)
            guard name != parent.name else { continue }
            var entry = seen[name] ?? Seen(parent: parent.name)
            if seen[name] == nil { order.append(name) }
            if entry.parent != parent.name { entry.allKeyed = false }  // under two parents: not one link
            for object in objects {
                if object["id"].flatMap(Self.keyText) == nil { entry.allKeyed = false }
                // The members that hold the parent's key, in the record's order, the key itself aside.
                let holding = object.compactMap { member, value -> String? in
                    member != "id" && Self.keyText(value) == parentKey ? member : nil
                }
                entry.foreignKeys = entry.foreignKeys.map { known in known.filter(holding.contains) } ?? holding
            }
            seen[name] = entry
        }
        return order.compactMap { name -> Collection? in
            guard let entry = seen[name], entry.allKeyed,
                let foreignKey = entry.foreignKeys.flatMap({ Self.likeliestForeignKey($0, toParent: entry.parent) }),
                let parentPath = parents.first(where: { $0.name == entry.parent })?.path
            else { return nil }
            var child = Collection(path: Self.sibling(of: parentPath, named: name), name: name, key: "id")
            child.parent = (entry.parent, foreignKey)
            child.isNestedOnly = true
            return child
        }
    }

    /// Of the members that held the parent's key in every nested record, the one most likely meant: named
    /// for the parent (`person_id`, `personId` for `people`; `order_id` for `orders`), else named like a
    /// key (`owner_id`, `ownerId`), else the first. A car `{"seats": 1, "person_id": 1}` under person 1
    /// links through `person_id`, not through the `seats` that happens to match.
    static func likeliestForeignKey(_ members: [String], toParent parent: String) -> String? {
        func squashed(_ text: String) -> String { text.lowercased().filter { $0 != "_" && $0 != "-" } }
        let lower = parent.lowercased()
        let singular =
            lower == "people"
            ? "person"
            : lower.hasSuffix("ies")
                ? String(lower.dropLast(3)) + "y"
                : lower.hasSuffix("ses") || lower.hasSuffix("xes")
                    ? String(lower.dropLast(2)) : lower.hasSuffix("s") ? String(lower.dropLast()) : lower
        let named = Set([squashed(singular + "id"), squashed(lower + "id")])
        if let member = members.first(where: { named.contains(squashed($0)) }) { return member }
        if let member = members.first(where: { $0.lowercased().hasSuffix("_id") || $0.hasSuffix("-id") || $0.hasSuffix("Id") }) {
            return member
        }
        return members.first
    }

    /// The collections with every parent link kept whose records all name a parent record the recording
    /// holds (or none): a link the data would break (a car of a person never seen) is dropped, and the
    /// nested exchanges it answered go back to stubs; a child seen only nested goes with it.
    static func linkedWhereSound(_ collections: [Collection]) -> [Collection] {
        var kept: [Collection] = []
        for var collection in collections {
            guard let link = collection.parent else {
                kept.append(collection)
                continue
            }
            // The parent's keys as JSON values: a foreign key `"3"` does not name the record keyed 3.
            let parentKeys = collections.first { $0.name == link.name }.map { parent in
                Set(parent.order.compactMap { key in (parent.records[key] ?? nil)?[parent.key] })
            }
            let records = collection.order.compactMap { collection.records[$0] ?? nil }
            let sound =
                parentKeys.map { keys in
                    records.allSatisfy { record in
                        guard let value = record[link.foreignKey], value != .null else { return true }
                        return keys.contains(value)
                    }
                } ?? false
            if sound {
                kept.append(collection)
            } else if !collection.isNestedOnly {
                collection.parent = nil
                collection.nestedPositions = []
                kept.append(collection)
            }
        }
        return kept
    }

    /// Whether two resource names are one to the configuration reader, which compares them ignoring case.
    static func sameName(_ a: String, _ b: String) -> Bool { a.lowercased() == b.lowercased() }

    /// The path's parent and last segment: `/api/people/3` → `/api/people`, `3`.
    static func split(_ path: String) -> (parent: String?, last: Substring?) {
        var trimmed = Substring(path)
        while trimmed.hasSuffix("/") && trimmed.count > 1 { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/"), trimmed.index(after: slash) < trimmed.endIndex else {
            return (nil, nil)
        }
        return (String(trimmed[..<slash]), trimmed[trimmed.index(after: slash)...])
    }

    /// The elements when every one is an object.
    static func objects(_ elements: [JSON]) -> [JSONObject]? {
        var objects: [JSONObject] = []
        for element in elements {
            guard case .object(let object) = element else { return nil }
            objects.append(object)
        }
        return objects
    }

    /// The configuration, the resources' names, the number of stubs, and the exchanges and WebSocket
    /// sessions no route can name; ``webSocketsWritten`` is set.
    mutating func build() -> (JSON, [String], Int, Int) {
        var root: JSONObject = ["store": "memory"]
        if !basePath.isEmpty { root["basePath"] = .string(basePath) }
        var data = JSONObject()
        if !resources.isEmpty {
            root["resources"] = .array(resources.map(Self.declaration))
            for collection in resources {
                let records = collection.order.compactMap { collection.records[$0] ?? nil }
                data[collection.name] = .array(records.map(JSON.object))
            }
        }
        let (routes, unnamed) = stubs()
        let (sockets, written, unnamedSessions) = socketRoutes(besides: routes)
        webSocketsWritten = written
        // The sockets' routes first: a handshake is a GET, which a stub of the same path would answer.
        if !routes.isEmpty || !sockets.isEmpty { root["routes"] = .array(sockets + routes) }
        if !data.isEmpty { root["data"] = .object(data) }
        return (.object(root), resources.map(\.name), routes.count, unnamed + unnamedSessions)
    }

    /// The WebSocket sessions written by ``build()``.
    var webSocketsWritten = 0

    /// The WebSocket routes: one per handshake (path and query), playing its sessions in the order they
    /// were recorded (the last again after that); the number of sessions written and of those left out
    /// (a path no route can name). A route whose path a recorded plain `GET` also has asks for the
    /// `Upgrade` field, so that the plain request reaches its stub.
    func socketRoutes(besides stubs: [JSON]) -> ([JSON], Int, Int) {
        var groups: [(pattern: String, match: JSONObject, answers: [JSON])] = []
        var index: [String: Int] = [:]
        var unnamed = 0
        let plainPaths = Set(
            stubs.compactMap { route -> String? in
                route.objectValue?["method"]?.stringValue == "GET" ? route.objectValue?["path"]?.stringValue : nil
            })
        for session in sessions {
            guard !Self.isAdmin(session.path), let path = Self.relative(session.path, to: basePath),
                let pattern = Self.pattern(of: path)
            else {
                unnamed += 1
                continue
            }
            var match = Self.match(
                of: Exchange(
                    method: .get, path: session.path, query: session.query, requestBody: [],
                    status: 101, responseHeaders: [], responseBody: []))
            if plainPaths.contains(pattern) {
                match["headers"] = ["Upgrade": ["present": true]]
            }
            let identity = "\(pattern) \(JSON.object(match).serializedString())"
            if let existing = index[identity] {
                groups[existing].answers.append(Self.answer(of: session))
            } else {
                index[identity] = groups.count
                groups.append((pattern, match, [Self.answer(of: session)]))
            }
        }
        let routes = groups.map { Self.route(["path": .string($0.pattern)], match: $0.match, answers: $0.answers) }
        return (routes, sessions.count - unnamed, unnamed)
    }

    /// A session as a route's answer: its script (each of the backend's messages after the time it took,
    /// a `receive` for each of the client's, the backend's close or cut, or `keepOpen` when the backend did
    /// not end it), the subprotocol, the backend's fields on the `101`, all verbatim.
    static func answer(of session: ProxyRecording.WebSocketSession) -> JSON {
        var messages: [JSON] = []
        var last = Duration.zero
        var ended = false
        for moment in session.moments where !ended {
            var step: JSONObject
            switch moment.event {
            case .fromClient:
                messages.append(["receive": true])
                last = moment.at
                continue
            case .fromUpstream(.text(let text)): step = ["text": .string(text)]
            case .fromUpstream(.binary(let bytes)): step = ["base64": .string(Base64.encode(bytes))]
            case .upstreamClosed(let close):
                step = ["close": .integer(Int(close.code))]
                if !close.reason.isEmpty { step["reason"] = .string(close.reason) }
                ended = true
            case .upstreamDropped:
                step = ["drop": true]
                ended = true
            }
            // In whole milliseconds, at most the ten minutes a step may wait.
            let milliseconds = min(max(Int((moment.at - last) / .milliseconds(1)), 0), 600_000)
            if milliseconds > 0 { step["delay"] = .integer(milliseconds) }
            last = moment.at
            messages.append(.object(step))
        }
        var script = JSONObject()
        if !messages.isEmpty { script["messages"] = .array(messages) }
        if !ended { script["keepOpen"] = true }
        // A name a route cannot offer (a HAR's `chat, v2`, a backend's odd value) is left out.
        if let subprotocol = session.subprotocol, WebSocketScript.isSubprotocolName(subprotocol) {
            script["protocols"] = [.string(subprotocol)]
        }
        var answer: JSONObject = ["websocket": .object(script)]
        let headers = headerObject(session.responseHeaders)
        if !headers.isEmpty { answer["headers"] = .object(headers) }
        answer["verbatim"] = true
        return .object(answer)
    }

    /// A resource's declaration: each member's type from the values seen.
    static func declaration(of collection: Collection) -> JSON {
        let records = collection.order.compactMap { collection.records[$0] ?? nil }
        var fields = JSONObject()
        // Members some record lacks: the store holds a declared field's absence as `null`, so answers
        // leave their nulls out, unless a record held an explicit `null` there (then that `null` is kept,
        // and a record that lacked the member answers `null`: the two cannot both be given back).
        var omitted: [JSON] = []
        for member in collection.members {
            let values = records.compactMap { $0[member] }
            // The default key `id` holding integers is the store's own; any other key is declared.
            if member == "id", collection.key == "id", values.allSatisfy({ if case .integer = $0 { true } else { false } }) {
                continue
            }
            // The foreign key is the parent link's, typed as the parent's key.
            if member == collection.parent?.foreignKey { continue }
            fields[member] = .string(fieldType(of: values).rawValue)
            if values.count < records.count, !values.contains(.null) { omitted.append(.string(member)) }
        }
        var declaration: JSONObject = ["name": .string(collection.name), "fields": .object(fields)]
        if let link = collection.parent {
            declaration["parents"] = [["resource": .string(link.name), "foreignKey": .string(link.foreignKey)]]
        }
        if fields[collection.key] != nil {
            // A key of strings (or another member than `id`) is the records' own.
            declaration["primaryKey"] = .string(collection.key)
            // UUIDs the backend made: the mock makes them too, so a create without one works as there.
            let keys = records.compactMap { $0[collection.key]?.stringValue }
            if !keys.isEmpty, keys.count == records.count, keys.allSatisfy({ UUID(uuidString: $0) != nil }) {
                declaration["keyFormat"] = "uuid"
            }
        }
        if !omitted.isEmpty { declaration["omitNulls"] = .array(omitted) }
        return .object(declaration)
    }

    /// The narrowest type that holds every value seen (nulls aside).
    static func fieldType(of values: [JSON]) -> FieldType {
        var kinds = Set<String>()
        for value in values {
            switch value {
            case .null: continue
            case .bool: kinds.insert("boolean")
            case .integer: kinds.insert("integer")
            case .double: kinds.insert("float")
            case .string: kinds.insert("string")
            case .array, .object: kinds.insert("json")
            }
        }
        if kinds == ["integer"] { return .integer }
        if kinds.isSubset(of: ["integer", "float"]), !kinds.isEmpty { return .float }
        if kinds == ["string"] { return .string }
        if kinds == ["boolean"] { return .boolean }
        return .json
    }

    /// One stub per distinct request among the exchanges no resource took, its answers in order.
    func stubs() -> ([JSON], Int) {
        struct Group {
            var method: String
            var pattern: String
            var match: JSONObject
            var answers: [JSON] = []
        }
        var groups: [Group] = []
        var index: [String: Int] = [:]
        var unnamed = 0
        for (position, exchange) in exchanges.enumerated() where !absorbed.contains(position) {
            // A status a stub cannot give (a configuration takes 200 to 599), or a path under the admin API's
            // prefix, which its own routes answer (a browser's HAR of the console holds those).
            guard (200...599).contains(exchange.status), !Self.isAdmin(exchange.path),
                var path = Self.relative(exchange.path, to: basePath),
                let pattern = Self.pattern(of: path)
            else {
                unnamed += 1
                continue
            }
            path = pattern
            let match = Self.match(of: exchange)
            let identity = "\(exchange.method.rawValue) \(path) \(JSON.object(match).serializedString())"
            let answer = Self.answer(of: exchange)
            if let existing = index[identity] {
                groups[existing].answers.append(answer)
            } else {
                index[identity] = groups.count
                groups.append(Group(method: exchange.method.rawValue, pattern: path, match: match, answers: [answer]))
            }
        }
        // A stub with more conditions first: `GET /search?q=a` before a `GET /search` that takes any query.
        let ordered = groups.enumerated().sorted { a, b in
            let (x, y) = (Self.conditions(a.element.match), Self.conditions(b.element.match))
            return x != y ? x > y : a.offset < b.offset
        }.map(\.element)
        let routes = ordered.map { group in
            Self.route(
                ["method": .string(group.method), "path": .string(group.pattern)], match: group.match,
                answers: group.answers)
        }
        return (routes, unnamed)
    }

    /// A route of `head` (its method and path) with its match and answers: the same answer every time is
    /// one answer written inline; different ones are a sequence that keeps the last.
    static func route(_ head: JSONObject, match: JSONObject, answers: [JSON]) -> JSON {
        var route = head
        if !match.isEmpty { route["match"] = .object(match) }
        if Set(answers).count == 1, case .object(let answer) = answers[0] {
            for (key, value) in answer { route[key] = value }
        } else {
            route["responses"] = .array(answers)
        }
        return .object(route)
    }

    /// Whether `path` lies under `/__hammock`, the admin API's prefix in the configuration written (which
    /// names no other), where a stub could never be reached.
    static func isAdmin(_ path: String) -> Bool { path == "/__hammock" || path.hasPrefix("/__hammock/") }

    /// How many values `match` asks for: each member of its sections, a repeated parameter's each value.
    static func conditions(_ match: JSONObject) -> Int {
        match.values.reduce(0) { total, section in
            total + (section.objectValue?.values.reduce(0) { $0 + ($1["allOf"]?.arrayValue?.count ?? 1) } ?? 0)
        }
    }

    /// `path` below `base`, or `nil` when it is not below it.
    static func relative(_ path: String, to base: String) -> String? {
        guard !base.isEmpty else { return path }
        guard path.hasPrefix(base + "/") else { return nil }
        return String(path.dropFirst(base.count))
    }

    /// The stub pattern that names exactly `path`: a segment a pattern would read as a parameter or a
    /// wildcard is percent-encoded; an empty segment cannot be named (`nil`).
    static func pattern(of path: String) -> String? {
        guard path.hasPrefix("/") else { return nil }
        if path == "/" { return path }
        var body = path.dropFirst()
        if body.hasSuffix("/") { body = body.dropLast() }
        var segments: [String] = []
        for segment in body.split(separator: "/", omittingEmptySubsequences: false) {
            guard !segment.isEmpty, PercentEncoding.decode(segment) != nil else { return nil }
            if segment.hasPrefix(":") {
                segments.append("%3A" + segment.dropFirst())
            } else if segment == "*" || segment == "**" {
                segments.append(String(repeating: "%2A", count: segment.count))
            } else {
                segments.append(String(segment))
            }
        }
        return "/" + segments.joined(separator: "/")
    }

    /// What a replayed request must have to get this answer: its query items, and the top-level members
    /// of a JSON object body; redacted values are left out (the replayed request holds the real one).
    static func match(of exchange: Exchange) -> JSONObject {
        var match = JSONObject()
        if let query = exchange.query, !query.isEmpty {
            var values: [(name: String, values: [String])] = []
            for item in query.split(separator: "&") {
                let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = PercentEncoding.decodeForm(Array(parts[0].utf8)[...]), !name.isEmpty else { continue }
                let value = parts.count == 2 ? PercentEncoding.decodeForm(Array(parts[1].utf8)[...]) ?? "" : ""
                guard value != RecordingRedaction.placeholder else { continue }
                if let index = values.firstIndex(where: { $0.name == name }) {
                    if !values[index].values.contains(value) { values[index].values.append(value) }
                } else {
                    values.append((name, [value]))
                }
            }
            // A repeated parameter holds when one of its values does: `?q=a&q=b` asks for each of them, so
            // that `?q=a` alone does not take its answer (and, with more conditions, it is asked first).
            // Sorted: a matcher cannot tell `?q=b&q=a` from it, so the two are one stub answering in turn.
            // By name: `?a=1&b=2` and `?b=2&a=1` are one request to a matcher, so one stub.
            var items = JSONObject()
            for (name, sent) in values.sorted(by: { $0.name < $1.name }) {
                items[name] = sent.count == 1 ? .string(sent[0]) : ["allOf": .array(sent.sorted().map(JSON.string))]
            }
            if !items.isEmpty { match["query"] = .object(items) }
        }
        if ProxyRecording.isJSON(ProxyRecording.mediaType(exchange.requestContentType)),
            case .object(let object)? = try? JSON(parsing: exchange.requestBody)
        {
            var members = JSONObject()
            for (key, value) in object.sorted(by: { $0.key < $1.key })
            where value != .string(RecordingRedaction.placeholder) && !key.hasPrefix("/") {
                // A member whose value is an object of matcher words would be read as a matcher.
                if case .object = value { continue }
                members[key] = value
            }
            if !members.isEmpty { match["body"] = .object(members) }
        }
        return match
    }

    /// Header fields as a stub writes them: repeated ones (`Set-Cookie` aside, which cannot be joined) as
    /// one list (RFC 9110 §5.3).
    static func headerObject(_ fields: [HTTPField]) -> JSONObject {
        var headers = JSONObject()
        for field in fields {
            let name = field.name.canonicalName
            if let existing = headers[name]?.stringValue {
                if name.lowercased() != "set-cookie" { headers[name] = .string(existing + ", " + field.value) }
            } else {
                headers[name] = .string(field.value)
            }
        }
        return headers
    }

    /// The answer as a stub writes it, served verbatim: JSON as JSON, UTF-8 text as text, else base64.
    static func answer(of exchange: Exchange) -> JSON {
        var answer: JSONObject = ["status": .integer(exchange.status)]
        let headers = headerObject(exchange.responseHeaders)
        if !headers.isEmpty { answer["headers"] = .object(headers) }
        let body = exchange.responseBody
        // A HAR may hold a body where HTTP allows none (a 204, 205 or 304 with text): a stub cannot give one.
        if !body.isEmpty, MockResponse.allowsBody(HTTPResponse.Status(code: exchange.status)) {
            // A JSON `null` is written as text: a stub's `"body": null` means no body.
            if let json = json(exchange), json != .null {
                answer["body"] = json
            } else if let text = String(validating: body, as: UTF8.self) {
                answer["text"] = .string(text)
            } else {
                answer["base64"] = .string(Base64.encode(body))
            }
        }
        answer["verbatim"] = true
        return .object(answer)
    }
}
