import Foundation
public import HTTPTypes
public import HammockJSON
import HammockWire

/// A failure the mock injects on purpose, to test an app's failing paths: a 503 burst, a slow route.
///
/// ```swift
/// server.setFaults([
///     try Fault("GET /people/:id", rate: 0.2, effect: .status(503, retryAfter: 2)),
///     try Fault("*", effect: .delay(.uniform(.milliseconds(50), .milliseconds(400)))),
/// ])
/// ```
/// A fault applies once the router has matched a route (resource, stub or Swift route alike), and keys on
/// that route: its `route` names the method and the path pattern as the route table shows them (`*` for
/// one segment, `**` for the rest, a literal in a parameter's place for one record), so a fault on
/// `GET /people/:id` never fires for `GET /people`, nor for a stub on `GET /people/new`. The first fault
/// that matches and fires (by its ``rate``, drawn from the server's random numbers, seeded by
/// `hammock serve --seed`) applies; the journal names it.
public struct Fault: Sendable, Hashable, CustomStringConvertible {
    /// What a fault does.
    public enum Effect: Sendable, Hashable {
        /// Answers this status at once, without running the route: a problem body (or `body`), and a
        /// `Retry-After` header of `retryAfter` seconds when given.
        case status(Int, body: JSON? = nil, retryAfter: Int? = nil)
        /// Holds the route's answer for a time drawn from the distribution.
        case delay(Delay)
        /// Sends the route's answer with its body at this many bytes per second (see ``Bandwidth``).
        case bandwidth(Int)
        /// Fails the exchange below HTTP: see ``ConnectionFault``.
        case connection(ConnectionFault)
        /// Opens a WebSocket route's socket, then closes or drops it: see ``WebSocketFault``.
        case webSocket(WebSocketFault)
    }

    /// How long a delay fault holds an answer.
    public enum Delay: Sendable, Hashable {
        /// Always this long.
        case fixed(Duration)
        /// Uniformly between the two.
        case uniform(Duration, Duration)
        /// Log-normal with this median and 99th percentile: mostly near the median, now and then far
        /// longer, as real networks are.
        case logNormal(median: Duration, p99: Duration)
    }

    /// The method the fault applies to; every method when `nil`.
    public var method: HTTPRequest.Method?
    /// The path pattern; every path when `nil` (the route `*`).
    public var path: PathPattern?
    /// The share of matching requests it fires on, from 0 to 1.
    public var rate: Double
    /// What it does.
    public var effect: Effect
    /// The name that `removeFault(named:)`, `addFault(_:)` (which replaces a fault of the same name) and
    /// `/__hammock/faults/{name}` use: 1 to 64 of `A-Z a-z 0-9 . _ -`. A server names a fault that has
    /// none `fault-1`, `fault-2`, … as it puts it in force.
    public var name: String?

    /// The longest delay a fault holds an answer: ten minutes.
    public static let longestDelay = Duration.seconds(600)

    /// A fault on `route` (`"GET /people/:id"`, `"/people/**"`, or `"*"` for every request).
    /// - Throws: ``FaultError`` for a route that is not `[METHOD] PATH` or `*`, a rate outside 0 to 1, a
    ///   status outside 200 to 599, a negative `retryAfter`, a delay outside 0 to ten minutes, or a
    ///   bandwidth outside ``Bandwidth/range``.
    public init(_ route: String, rate: Double = 1, effect: Effect, name: String? = nil) throws(FaultError) {
        if let name { try Self.checkName(name) }
        self.name = name
        let parts = route.split(separator: " ", omittingEmptySubsequences: true)
        switch parts.count {
        case 1 where parts[0] == "*":
            method = nil
            path = nil
        case 1, 2:
            if parts.count == 2 {
                guard let method = HTTPRequest.Method(String(parts[0]).uppercased()) else {
                    throw FaultError("'\(parts[0])' is not an HTTP method", key: "route")
                }
                self.method = method
            } else {
                method = nil
            }
            do {
                path = try PathPattern(String(parts[parts.count - 1]))
            } catch {
                throw FaultError(error.description, key: "route")
            }
        default:
            throw FaultError("the route '\(route)' is not 'METHOD /path', '/path' or '*'", key: "route")
        }
        guard rate.isFinite, (0...1).contains(rate) else {
            throw FaultError("the rate \(rate) is not between 0 and 1", key: "rate")
        }
        self.rate = rate
        switch effect {
        case .status(let code, let body, let retryAfter):
            guard (200...599).contains(code) else { throw FaultError("the status \(code) is not from 200 to 599", key: "status") }
            if body != nil, !MockResponse.allowsBody(HTTPResponse.Status(code: code)) {
                throw FaultError("a \(code) answer has no body", key: "body")
            }
            if let retryAfter, retryAfter < 0 { throw FaultError("retryAfter must be 0 seconds or more", key: "retryAfter") }
        case .delay(let delay):
            for duration in delay.durations where duration < .zero || duration > Self.longestDelay {
                throw FaultError("a delay must be from 0 to 600 seconds", key: "delay")
            }
            if case .logNormal(let median, let p99) = delay, p99 < median || median <= .zero {
                throw FaultError("a log-normal delay needs a median above 0 and a p99 at least the median", key: "delay")
            }
        case .bandwidth(let rate):
            guard Bandwidth.range.contains(rate) else {
                throw FaultError("a bandwidth must be from 1 to 10000000000 bytes per second", key: "bandwidth")
            }
        case .connection:
            break
        case .webSocket(let fault):
            if case .close(let close) = fault.action, !WebSocketClose.isSendable(Int(close.code)) {
                throw FaultError(
                    "\(close.code) is not a close code a server sends: 1000 to 1003, 1007 to 1014, or 3000 to 4999",
                    key: "webSocket")
            }
            guard (0...1_000_000).contains(fault.afterMessages) else {
                throw FaultError("afterMessages must be from 0 to 1000000", key: "webSocket")
            }
        }
        self.effect = effect
    }

    /// Whether the fault is for a request with `method` that the router matched to `route`; `path` is
    /// the request's path inside the base path, read only where the route has a variable segment.
    ///
    /// The fault's pattern is laid over the route's, segment by segment: a `:name` stands for a route's
    /// parameter (of any name, or a `*`), a `*` for any one segment of the route, a trailing `**` for one
    /// or more further; a literal is the same literal in the route, or a value of this request in a variable
    /// segment (`/people/3` fires for record 3 only). So `GET /people/:id` fires for the resource's item
    /// route, not for a stub on `/people/new`, though that path would fit it as text.
    func matches(_ method: HTTPRequest.Method, route: MatchedRoute, path requestPath: String) -> Bool {
        if let wanted = self.method, wanted != method, !(wanted == .get && method == .head) { return false }
        guard let path else { return true }
        var routeParts = PathPattern.parts(of: route.pattern)
        let routeHasRest = routeParts.last == "**"
        if routeHasRest { routeParts.removeLast() }
        var requestParts: [Substring]?  // split only when a variable segment is compared with a literal
        for (index, segment) in path.segments.enumerated() {
            let routePart: Substring?  // nil: a segment inside the route's `**`
            if index < routeParts.count {
                routePart = routeParts[index]
            } else if routeHasRest {
                routePart = nil
            } else {
                return false  // the fault is longer than the route
            }
            let isVariable = routePart.map { $0 == "*" || $0.hasPrefix(":") } ?? true
            switch segment {
            case .anySegment:
                continue
            case .parameter:
                guard isVariable else { return false }
            case .literal(let literal):
                if let routePart, !isVariable {
                    guard (PercentEncoding.decode(routePart) ?? String(routePart)) == literal else { return false }
                } else {
                    if requestParts == nil { requestParts = PathPattern.parts(of: requestPath) }
                    guard let requestParts, index < requestParts.count,
                        PercentEncoding.decode(requestParts[index]) == literal
                    else { return false }
                }
            }
        }
        let count = path.segments.count
        if path.matchesRest { return routeParts.count > count || routeHasRest }
        guard routeHasRest else { return routeParts.count == count }
        // The route's `**` took exactly the fault's segments past its own: the request ends there.
        if requestParts == nil { requestParts = PathPattern.parts(of: requestPath) }
        return count > routeParts.count && requestParts?.count == count
    }

    /// The route as written: `GET /people/:id`, or `*`.
    public var route: String {
        switch (method, path) {
        case (nil, nil): "*"
        case (nil, let path?): path.description
        case (let method?, nil): "\(method.rawValue) *"
        case (let method?, let path?): "\(method.rawValue) \(path.description)"
        }
    }

    /// The compact form `hammock serve --fault` takes: `GET /people/:id 503 retry-after=2 20%`.
    public var description: String {
        var parts = [route]
        switch effect {
        case .status(let code, _, let retryAfter):
            parts.append(String(code))
            if let retryAfter { parts.append("retry-after=\(retryAfter)") }
        case .delay(let delay): parts.append("delay=\(delay)")
        case .bandwidth(let rate): parts.append("bandwidth=\(Bandwidth.describe(rate))")
        case .connection(let fault): parts.append(fault.rawValue)
        case .webSocket(let fault): parts.append(fault.description)
        }
        if rate < 1 { parts.append("\(Self.percent(rate))%") }
        return parts.joined(separator: " ")
    }

    /// Throws unless `name` is 1 to 64 of `A-Z a-z 0-9 . _ -`: a name goes in a URL path unencoded.
    public static func checkName(_ name: String) throws(FaultError) {
        let allowed = name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard allowed, (1...64).contains(name.utf8.count), name != ".", name != ".." else {
            throw FaultError("a fault's name is 1 to 64 of A-Z a-z 0-9 . _ -, not '\(name.prefix(64))'", key: "name")
        }
    }

    static func percent(_ rate: Double) -> String {
        let value = rate * 100
        return value == value.rounded() ? String(Int(value)) : String(value)
    }
}

extension Fault.Delay: CustomStringConvertible {
    var durations: [Duration] {
        switch self {
        case .fixed(let duration): [duration]
        case .uniform(let low, let high): [low, high]
        case .logNormal(let median, let p99): [median, p99]
        }
    }

    /// `300`, `50..400` (milliseconds), or `lognormal:100:800`.
    public var description: String {
        func ms(_ duration: Duration) -> String { String(Int(duration / .milliseconds(1))) }
        switch self {
        case .fixed(let duration): return ms(duration)
        case .uniform(let low, let high): return "\(ms(low))..\(ms(high))"
        case .logNormal(let median, let p99): return "lognormal:\(ms(median)):\(ms(p99))"
        }
    }

    /// A delay for two uniform numbers in `0..<1` (the second is used by the log-normal only).
    package func draw(_ first: Double, _ second: Double) -> Duration {
        switch self {
        case .fixed(let duration):
            return duration
        case .uniform(let low, let high):
            let (lower, upper) = low <= high ? (low, high) : (high, low)
            return lower + (upper - lower) * min(max(first, 0), 1)
        case .logNormal(let median, let p99):
            // ln(delay) is normal with mean ln(median); the 99th percentile is 2.326 deviations above it.
            let sigma = log(Double(p99 / .nanoseconds(1)) / Double(median / .nanoseconds(1))) / 2.326_347_874
            // Box-Muller, with the first number kept away from 0 (whose logarithm is infinite).
            let z = (-2 * log(max(first, 1e-12))).squareRoot() * cos(2 * Double.pi * second)
            let seconds = Double(median / .nanoseconds(1)) / 1e9 * exp(sigma * z)
            return .nanoseconds(Int64(min(max(seconds, 0), 600) * 1e9))
        }
    }
}

/// A fault that cannot be used, and why.
public struct FaultError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// The key of the JSON form the mistake is in (`rate`, `delay.min`), when there is one.
    public var key: String?

    init(_ message: String, key: String? = nil) {
        self.message = message
        self.key = key
    }

    init(key: String, _ message: String) { self.init(message, key: key) }

    /// `rate: the rate 2.0 is not between 0 and 1`, or the message alone.
    public var description: String { key.map { "\($0): \(message)" } ?? message }
}
