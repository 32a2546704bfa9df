import HTTPTypes
import HammockJSON
import Synchronization

/// The faults in force, and what applies them once the router has matched a route.
final class FaultInjector: Sendable {
    private let faults = Mutex<[Fault]>([])
    /// Whether any fault is in force: the one check a request pays when none is.
    private let isActive = Atomic<Bool>(false)
    let random: @Sendable () -> Double
    let timer: LatencyTimer
    let stopSignal: StopSignal

    init(random: @escaping @Sendable () -> Double, timer: LatencyTimer, stopSignal: StopSignal) {
        self.random = random
        self.timer = timer
        self.stopSignal = stopSignal
    }

    var all: [Fault] { faults.withLock { $0 } }

    /// Puts `new` in force: each unnamed fault gets the first free `fault-N`, and of two with one name
    /// the later one stays, in the earlier one's place.
    func replace(_ new: [Fault]) {
        faults.withLock { faults in
            faults = []
            for fault in new { Self.put(fault, into: &faults) }
            isActive.store(!faults.isEmpty, ordering: .releasing)
        }
    }

    /// Puts `fault` in force in one step (two callers adding at once both land): in the place of the
    /// fault with its name, or last. Returns its name.
    @discardableResult
    func add(_ fault: Fault) -> String {
        faults.withLock { faults in
            let name = Self.put(fault, into: &faults)
            isActive.store(true, ordering: .releasing)
            return name
        }
    }

    /// Takes the fault named `name` out of force, in one step; `nil` if none has that name.
    func remove(named name: String) -> Fault? {
        faults.withLock { faults in
            guard let index = faults.firstIndex(where: { $0.name == name }) else { return nil }
            let removed = faults.remove(at: index)
            isActive.store(!faults.isEmpty, ordering: .releasing)
            return removed
        }
    }

    @discardableResult
    private static func put(_ fault: Fault, into faults: inout [Fault]) -> String {
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
        guard isActive.load(ordering: .acquiring) else { return nil }
        for fault in all where fault.matches(request.method, path: request.path) {
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
