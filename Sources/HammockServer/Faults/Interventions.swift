import HTTPTypes
import HammockJSON

/// What the mock does to one request in place of, or around, the route it matched: a fault in force
/// that fired, or what the request asked for itself (`Prefer: status=503`, `?_delay=500`).
///
/// One mechanism for both: the router decides an intervention once it knows the route (never for the
/// admin API's), and ``Interventions/apply(_:to:handler:)`` carries it out. A fault that fires wins; a
/// request's own asks are read only when none does, and not at all under `--strict`.
struct Intervention: Sendable {
    /// Where it comes from.
    enum Origin: Sendable {
        /// A fault in force, which the journal names.
        case fault(Fault)
        /// The request's own asks, listed in `Preference-Applied` (`delay=500, status=503`).
        case asked(applied: String)
    }

    var origin: Origin
    /// How long the answer is held, counted from when the route began (released when the server stops).
    var hold: Duration?
    /// The answer given instead of running the route.
    var answer: MockResponse?
    /// How the transport sends the answer, when not as it is.
    var delivery: MockResponse.Delivery?
    /// What happens to a WebSocket the answer opens.
    var webSocket: WebSocketFault?
}

/// The faults' and asks' shared machinery: the random numbers a rate or a delay draws (seeded by
/// `hammock serve --seed`), the timer that holds answers, and the server's stop, which releases them.
/// The faults themselves are part of the server's runtime (``ServerRuntime/Settings/faults``), which
/// each request carries.
final class Interventions: Sendable {
    let random: @Sendable () -> Double
    let timer: LatencyTimer
    let stopSignal: StopSignal
    /// Whether requests may ask for a delay or a status (not under `--strict`).
    let allowsAsking: Bool

    init(random: @escaping @Sendable () -> Double, timer: LatencyTimer, stopSignal: StopSignal, allowsAsking: Bool) {
        self.random = random
        self.timer = timer
        self.stopSignal = stopSignal
        self.allowsAsking = allowsAsking
    }

    /// What applies to `request`, which the router matched to `route`: the first fault in force for the
    /// route that fires (drawing its rate, then its delay), else what the request asks for.
    /// - Throws: 400 ``HTTPProblem`` for an ask whose delay or status is not a number in range.
    func decide(for request: MockRequest, route: MatchedRoute) throws(HTTPProblem) -> Intervention? {
        if let faults = request.runtime?.settings.faults, !faults.isEmpty {
            for fault in faults where fault.matches(request.method, route: route, path: request.path) {
                // A rate of 1 or 0 draws nothing, so a seeded run's numbers go only to faults that need them.
                if fault.rate >= 1 || (fault.rate > 0 && random() < fault.rate) { return intervention(for: fault) }
            }
        }
        guard allowsAsking else { return nil }
        return try RequestOverrides.intervention(askedBy: request)
    }

    /// What `fault` does, its delay drawn now.
    func intervention(for fault: Fault) -> Intervention {
        var intervention = Intervention(origin: .fault(fault))
        switch fault.effect {
        case .status(let code, let body, let retryAfter):
            let status = HTTPResponse.Status(code: code)
            var response: MockResponse
            if let body {
                response = MockResponse(status: status, json: body)
            } else if code >= 400 {
                response = HTTPProblem(status, detail: "Injected by the fault '\(fault)'").response
            } else {
                response = MockResponse(status: status)
            }
            if let retryAfter { response.headerFields[.retryAfter] = String(retryAfter) }
            intervention.answer = response
        case .delay(let delay):
            intervention.hold = delay.draw(random(), random())
        case .bandwidth(let rate):
            intervention.delivery = .throttled(bytesPerSecond: rate)
        case .connection(let connectionFault):
            // A route that does not run answers a placeholder no client sees: status 0, as a browser
            // reports a network error; the journal keeps it with the fault's name.
            if !connectionFault.runsRoute { intervention.answer = MockResponse(status: Self.noAnswer) }
            intervention.delivery = .fault(connectionFault)
        case .webSocket(let webSocketFault):
            intervention.webSocket = webSocketFault
        }
        return intervention
    }

    /// The status of an answer that never leaves: 0, as browsers and `fetch` report a network error.
    static let noAnswer = HTTPResponse.Status(code: 0, reasonPhrase: "No Answer")

    /// Answers `request` as `intervention` says: its answer, or `handler`'s, held and delivered as it says;
    /// for a request's own asks, `Preference-Applied` lists them on the answer or the problem thrown.
    func apply(
        _ intervention: Intervention, to request: MockRequest, handler: (MockRequest) async throws -> MockResponse
    ) async throws -> MockResponse {
        var applied: String?
        var request = request
        if case .asked(let asks) = intervention.origin {
            applied = asks
            // What the mock took for itself is not the route's: a proxied request reaches the backend, and a
            // recording keeps it, without `_delay` or `Prefer: delay`.
            request = RequestOverrides.withoutAsks(request)
        }
        do {
            let answer = intervention.answer
            var response: MockResponse
            if let hold = intervention.hold {
                response = try await timer.hold(for: hold, releasedBy: stopSignal) {
                    if let answer { return answer }
                    return try await handler(request)
                }
            } else if let answer {
                response = answer
            } else {
                response = try await handler(request)
            }
            if let delivery = intervention.delivery { response.delivery = delivery }
            if let fault = intervention.webSocket, let session = response.webSocket {
                response.webSocket = fault.applied(to: session)
            }
            if let applied { response.headerFields[RequestOverrides.preferenceApplied] = applied }
            return response
        } catch var problem as HTTPProblem {
            if let applied { problem.headerFields[RequestOverrides.preferenceApplied] = applied }
            throw problem
        }
    }

    /// `faults` as they are put in force: each unnamed fault gets the first free `fault-N`, and of two
    /// with one name the later one stays, in the earlier one's place.
    static func named(_ faults: [Fault]) -> [Fault] {
        var named: [Fault] = []
        for fault in faults { put(fault, into: &named) }
        return named
    }

    /// Puts `fault` into `faults`: in the place of the fault with its name, or last. Returns its name.
    @discardableResult
    static func put(_ fault: Fault, into faults: inout [Fault]) -> String {
        var fault = fault
        let name: String
        if let given = fault.name {
            name = given
        } else {
            let taken = Set(faults.compactMap(\.name))
            var number = 1  // at most faults.count names are taken: this ends by faults.count + 1
            while taken.contains("fault-\(number)") { number += 1 }
            name = "fault-\(number)"
            fault.name = name
        }
        if let index = faults.firstIndex(where: { $0.name == name }) {
            faults[index] = fault
        } else {
            faults.append(fault)
        }
        return name
    }
}
