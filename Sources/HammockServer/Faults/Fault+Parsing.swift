import Foundation
public import HammockJSON

extension Fault {
    static let keys = ["name", "route", "rate", "status", "body", "retryAfter", "delay", "bandwidth", "kind", "webSocket"]
    static let effectKeys = ["status", "delay", "bandwidth", "kind", "webSocket"]

    /// A fault from JSON, the shape of a configuration file's `faults` and of `/__hammock/faults`:
    ///
    /// ```json
    /// {"route": "GET /people/:id", "rate": 0.2, "status": 503, "retryAfter": 2}
    /// {"route": "*", "delay": {"distribution": "lognormal", "median": 100, "p99": 800}}
    /// {"route": "GET /photos/*", "bandwidth": "3g"}
    /// {"route": "POST /orders", "rate": 0.1, "kind": "drop"}
    /// {"route": "GET /ws/prices", "webSocket": {"close": 1011, "reason": "overloaded", "afterMessages": 3}}
    /// {"route": "GET /ws/prices", "webSocket": {"drop": true, "afterMessages": 1}}
    /// ```
    /// Delays are milliseconds: a number, or `{"distribution": "uniform", "min": 50, "max": 400}`.
    /// A bandwidth is bytes per second or a preset (``Bandwidth/presets``); a kind is a ``ConnectionFault``.
    /// - Throws: ``FaultError`` naming the key (`rate: ...`).
    public init(json: JSON) throws(FaultError) {
        guard case .object(let object) = json else {
            throw FaultError("expected a fault: {\"route\": \"GET /people/:id\", \"status\": 503}")
        }
        for key in object.keys where !Self.keys.contains(key) {
            throw FaultError(key: "\(key)", "unknown key; expected one of \(Self.keys.joined(separator: ", "))")
        }
        guard case .string(let route)? = object["route"] else {
            throw FaultError(key: "route", "missing; name it as \"GET /people/:id\", \"/people/**\" or \"*\"")
        }
        var rate = 1.0
        if let value = object["rate"] {
            guard let number = value.doubleValue else { throw FaultError(key: "rate", "expected a number from 0 to 1") }
            rate = number
        }
        let given = Self.effectKeys.filter { object[$0] != nil }
        guard let effectKey = given.first else {
            throw FaultError("give one effect: status, delay, bandwidth, kind or webSocket")
        }
        guard given.count == 1 else {
            throw FaultError(key: given[1], "give one effect per fault, not \(given[0]) and \(given[1])")
        }
        if effectKey != "status", let key = ["body", "retryAfter"].first(where: { object[$0] != nil }) {
            throw FaultError(key: key, "belongs to a status fault, not to \(effectKey)")
        }
        let effect: Effect
        switch effectKey {
        case "status":
            guard let code = object["status"]?.intValue else { throw FaultError(key: "status", "expected a status code") }
            var retryAfter: Int?
            if let value = object["retryAfter"] {
                guard let seconds = value.intValue else { throw FaultError(key: "retryAfter", "expected whole seconds") }
                retryAfter = seconds
            }
            effect = .status(code, body: object["body"], retryAfter: retryAfter)
        case "delay":
            effect = .delay(try Self.delay(json: object["delay"] ?? .null))
        case "bandwidth":
            effect = .bandwidth(try Self.bandwidth(json: object["bandwidth"] ?? .null))
        case "webSocket":
            effect = .webSocket(try Self.webSocketFault(json: object["webSocket"] ?? .null))
        default:
            guard case .string(let name)? = object["kind"], let kind = ConnectionFault(rawValue: name.lowercased()) else {
                throw FaultError(key: "kind", "expected one of \(Self.kindNames)")
            }
            effect = .connection(kind)
        }
        var name: String?
        if let value = object["name"] {
            guard case .string(let text) = value else {
                throw FaultError(key: "name", "expected a string such as \"slow-login\"")
            }
            name = text
        }
        try self.init(route, rate: rate, effect: effect, name: name)
    }

    static let kindNames = ConnectionFault.allCases.map(\.rawValue).joined(separator: ", ")

    /// `{"close": 1011, "reason": "…", "afterMessages": 3}` or `{"drop": true, "afterMessages": 3}`.
    static func webSocketFault(json: JSON) throws(FaultError) -> WebSocketFault {
        guard case .object(let object) = json else {
            throw FaultError(key: "webSocket", "expected {\"close\": 1011, \"afterMessages\": 3} or {\"drop\": true}")
        }
        for key in object.keys where !["close", "reason", "drop", "afterMessages"].contains(key) {
            throw FaultError(key: "webSocket.\(key)", "unknown key; expected close, reason, drop and afterMessages")
        }
        var after = 0
        if let value = object["afterMessages"] {
            guard let count = value.intValue, count >= 0 else {
                throw FaultError(key: "webSocket.afterMessages", "expected a count of messages, 0 or more")
            }
            after = count
        }
        switch (object["close"], object["drop"]) {
        case (let code?, nil):
            guard let number = code.intValue, (0...65_535).contains(number) else {
                throw FaultError(key: "webSocket.close", "expected a close code such as 1011")
            }
            var reason = ""
            if let value = object["reason"] {
                guard case .string(let text) = value, text.utf8.count <= 123 else {
                    throw FaultError(key: "webSocket.reason", "expected a reason of at most 123 bytes")
                }
                reason = text
            }
            return WebSocketFault(.close(WebSocketClose(code: UInt16(number), reason: reason)), afterMessages: after)
        case (nil, .bool(true)?):
            if object["reason"] != nil { throw FaultError(key: "webSocket.reason", "belongs to close") }
            return WebSocketFault(.drop, afterMessages: after)
        default:
            throw FaultError(key: "webSocket", "give one of close (a code) and \"drop\": true")
        }
    }

    static func bandwidth(json: JSON) throws(FaultError) -> Int {
        if case .string(let name) = json {
            guard let rate = Bandwidth.preset(named: name) ?? Int(name) else {
                throw FaultError(
                    key: "bandwidth",
                    "expected bytes per second or one of \(Bandwidth.presets.map(\.name).joined(separator: ", ")), found \"\(name.prefix(40))\""
                )
            }
            return rate
        }
        guard let number = json.doubleValue, number.isFinite, number >= 1, number <= Double(Bandwidth.range.upperBound) else {
            throw FaultError(key: "bandwidth", "expected bytes per second from 1 to 10000000000, or a preset such as \"3g\"")
        }
        return Int(number)
    }

    static func delay(json: JSON) throws(FaultError) -> Delay {
        func milliseconds(_ value: JSON?, _ key: String) throws(FaultError) -> Duration {
            guard let number = value?.doubleValue, number.isFinite, number >= 0, number <= 600_000 else {
                throw FaultError(key: "delay\(key)", "expected milliseconds from 0 to 600000")
            }
            return .nanoseconds(Int64(number * 1_000_000))
        }
        if json.doubleValue != nil { return .fixed(try milliseconds(json, "")) }
        guard case .object(let object) = json, case .string(let distribution)? = object["distribution"] else {
            throw FaultError(key: "delay", "expected milliseconds, or {\"distribution\": \"uniform\", \"min\": 50, \"max\": 400}")
        }
        switch distribution {
        case "uniform":
            return .uniform(try milliseconds(object["min"], ".min"), try milliseconds(object["max"], ".max"))
        case "lognormal":
            return .logNormal(median: try milliseconds(object["median"], ".median"), p99: try milliseconds(object["p99"], ".p99"))
        default:
            throw FaultError(key: "delay.distribution", "expected uniform or lognormal, found \"\(distribution.prefix(40))\"")
        }
    }

    /// The fault as JSON, the shape ``init(json:)`` reads.
    public var json: JSON {
        var object: JSONObject = ["route": .string(route)]
        if let name { object["name"] = .string(name) }
        if rate < 1 { object["rate"] = .double(rate) }
        func ms(_ duration: Duration) -> JSON { .integer(Int(duration / .milliseconds(1))) }
        switch effect {
        case .status(let code, let body, let retryAfter):
            object["status"] = .integer(code)
            if let body { object["body"] = body }
            if let retryAfter { object["retryAfter"] = .integer(retryAfter) }
        case .delay(.fixed(let duration)):
            object["delay"] = ms(duration)
        case .delay(.uniform(let low, let high)):
            object["delay"] = ["distribution": "uniform", "min": ms(low), "max": ms(high)]
        case .delay(.logNormal(let median, let p99)):
            object["delay"] = ["distribution": "lognormal", "median": ms(median), "p99": ms(p99)]
        case .bandwidth(let rate):
            let name = Bandwidth.describe(rate)
            object["bandwidth"] = Int(name) == nil ? .string(name) : .integer(rate)
        case .connection(let kind):
            object["kind"] = .string(kind.rawValue)
        case .webSocket(let fault):
            var details: JSONObject = [:]
            switch fault.action {
            case .close(let close):
                details["close"] = .integer(Int(close.code))
                if !close.reason.isEmpty { details["reason"] = .string(close.reason) }
            case .drop: details["drop"] = true
            }
            if fault.afterMessages > 0 { details["afterMessages"] = .integer(fault.afterMessages) }
            object["webSocket"] = .object(details)
        }
        return .object(object)
    }

    /// A fault in the compact form of `hammock serve --fault`:
    ///
    /// ```text
    /// GET /people/:id 503 20%            503 on a fifth of the requests
    /// POST /orders 503 retry-after=2     503 with Retry-After: 2
    /// * delay=300                        every answer 300 ms late
    /// /search delay=50..400              uniformly 50 to 400 ms late
    /// GET /feed delay=lognormal:100:800  median 100 ms, 99th percentile 800 ms
    /// GET /photos/* bandwidth=3g         bodies at 3G speed (or bandwidth=BYTES_PER_SECOND)
    /// POST /orders drop 10%              a tenth of the orders made, their answers lost
    /// * reset                            every connection reset (also empty, timeout, truncate, malformed)
    /// POST /login 503 name=login-down    named, to remove or replace it alone later
    /// GET /ws/feed ws-close=1011 after=3 a WebSocket closed with 1011 after 3 messages (or ws-drop)
    /// ```
    /// - Throws: ``FaultError`` saying which part is wrong.
    public init(parsing text: String) throws(FaultError) {
        var words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard !words.isEmpty else { throw FaultError("empty; write it as 'GET /people/:id 503 20%'") }
        var route = words.removeFirst()
        if route != "*", !route.hasPrefix("/"), let next = words.first, next.hasPrefix("/") || next == "*" {
            route += " " + words.removeFirst()
        }
        var rate = 1.0
        var status: Int?
        var retryAfter: Int?
        var delay: Delay?
        var other: Effect?
        var name: String?
        var after: Int?
        for word in words {
            if word.hasPrefix("after=") {
                guard let count = Int(word.dropFirst("after=".count)), count >= 0 else {
                    throw FaultError("'\(word)' is not after=MESSAGES")
                }
                after = count
            } else if word.hasPrefix("ws-close=") || word == "ws-drop" {
                guard other == nil else { throw FaultError("give one effect per fault") }
                if word == "ws-drop" {
                    other = .webSocket(WebSocketFault(.drop))
                } else {
                    guard let code = UInt16(word.dropFirst("ws-close=".count)) else {
                        throw FaultError("'\(word)' is not ws-close=CODE")
                    }
                    other = .webSocket(WebSocketFault(.close(WebSocketClose(code: code))))
                }
            } else if word.hasPrefix("name=") {
                name = String(word.dropFirst("name=".count))
            } else if word.hasSuffix("%") {
                guard let percent = Double(word.dropLast()) else { throw FaultError("'\(word)' is not a rate such as 20%") }
                rate = percent / 100
            } else if let code = Int(word), word.count == 3 {
                status = code
            } else if word.hasPrefix("retry-after=") {
                guard let seconds = Int(word.dropFirst("retry-after=".count)) else {
                    throw FaultError("'\(word)' is not retry-after=SECONDS")
                }
                retryAfter = seconds
            } else if word.hasPrefix("delay=") {
                delay = try Self.compactDelay(String(word.dropFirst("delay=".count)))
            } else if other != nil, word.hasPrefix("bandwidth=") || ConnectionFault(rawValue: word.lowercased()) != nil {
                throw FaultError("give one effect per fault")
            } else if word.hasPrefix("bandwidth=") {
                other = .bandwidth(try Self.bandwidth(json: .string(String(word.dropFirst("bandwidth=".count)))))
            } else if let kind = ConnectionFault(rawValue: word.lowercased()) {
                other = .connection(kind)
            } else {
                throw FaultError(
                    "'\(word)' is not a status, delay=MS, bandwidth=B/S, \(Self.kindNames), ws-close=CODE, ws-drop, retry-after=S, after=N or a rate such as 20%"
                )
            }
        }
        let effects = [status.map { Effect.status($0, retryAfter: retryAfter) }, delay.map(Effect.delay), other].compactMap { $0 }
        guard let effect = effects.first else {
            throw FaultError("give an effect: a status such as 503, delay=MS, bandwidth=3g, or a kind such as reset")
        }
        guard effects.count == 1 else { throw FaultError("give one effect per fault") }
        if retryAfter != nil, status == nil { throw FaultError("retry-after belongs to a status fault") }
        var chosen = effect
        if let after {
            guard case .webSocket(var fault) = chosen else { throw FaultError("after belongs to ws-close and ws-drop") }
            fault.afterMessages = after
            chosen = .webSocket(fault)
        }
        try self.init(route, rate: rate, effect: chosen, name: name)
    }

    static func compactDelay(_ text: String) throws(FaultError) -> Delay {
        func ms(_ part: Substring) throws(FaultError) -> Duration {
            guard let number = Int(part), (0...600_000).contains(number) else {
                throw FaultError("'\(part)' is not milliseconds from 0 to 600000")
            }
            return .milliseconds(number)
        }
        if text.hasPrefix("lognormal:") {
            let parts = text.dropFirst("lognormal:".count).split(separator: ":")
            guard parts.count == 2 else { throw FaultError("write a log-normal delay as delay=lognormal:MEDIAN:P99") }
            return .logNormal(median: try ms(parts[0]), p99: try ms(parts[1]))
        }
        if let range = text.range(of: "..") {
            return .uniform(try ms(text[..<range.lowerBound]), try ms(text[range.upperBound...]))
        }
        return .fixed(try ms(Substring(text)))
    }
}
