import HTTPTypes
import HammockJSON

/// What applies the faults in force once the router has matched a route; the list itself is part of
/// the server's runtime (``ServerRuntime/Settings/faults``), which each request carries.
final class FaultInjector: Sendable {
    let random: @Sendable () -> Double
    let timer: LatencyTimer
    let stopSignal: StopSignal

    init(random: @escaping @Sendable () -> Double, timer: LatencyTimer, stopSignal: StopSignal) {
        self.random = random
        self.timer = timer
        self.stopSignal = stopSignal
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

    /// The first fault for `request` (its path inside the base path) that fires, drawing its rate.
    func firing(for request: MockRequest) -> Fault? {
        guard let faults = request.runtime?.settings.faults, !faults.isEmpty else { return nil }
        for fault in faults where fault.matches(request.method, path: request.path) {
            // A rate of 1 or 0 draws nothing, so a seeded run's numbers go only to faults that need them.
            if fault.rate >= 1 || (fault.rate > 0 && random() < fault.rate) { return fault }
        }
        return nil
    }

    /// The status of an answer that never leaves: 0, as browsers and `fetch` report a network error.
    static let noAnswer = HTTPResponse.Status(code: 0, reasonPhrase: "No Answer")

    /// Answers `request` as `fault` says, running `handler` for a delay.
    func apply(
        _ fault: Fault, to request: MockRequest, handler: (MockRequest) async throws -> MockResponse
    ) async throws -> MockResponse {
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
            return response
        case .delay(let delay):
            return try await timer.hold(for: delay.draw(random(), random()), releasedBy: stopSignal) {
                try await handler(request)
            }
        case .bandwidth(let rate):
            var response = try await handler(request)
            response.delivery = .throttled(bytesPerSecond: rate)
            return response
        case .connection(let fault):
            // A route that does not run answers a placeholder no client sees: status 0, as a browser
            // reports a network error; the journal keeps it with the fault's name.
            var response = fault.runsRoute ? try await handler(request) : MockResponse(status: Self.noAnswer)
            response.delivery = .fault(fault)
            return response
        }
    }
}
