extension MockServer {
    /// The faults in force, in the order they are tried, each with its name.
    public var faultsInForce: [Fault] { runtimeCell.runtime.settings.faults }

    /// Puts `faults` in force from the next request on, replacing those before (`[]` for none). A fault
    /// without a name gets the first free `fault-N`; of two with one name, the later one stays.
    public func setFaults(_ faults: [Fault]) { runtimeCell.change { $0.faults = Interventions.named(faults) } }

    /// Puts `fault` in force, in one step: in the place of the fault with its name, or after those in
    /// force. Returns its name (`fault-N` when it had none), which ``removeFault(named:)`` takes.
    @discardableResult
    public func addFault(_ fault: Fault) -> String { runtimeCell.change { Interventions.put(fault, into: &$0.faults) } }

    /// Takes the fault named `name` out of force, leaving the others; `nil` if no fault has that name.
    @discardableResult
    public func removeFault(named name: String) -> Fault? {
        runtimeCell.change { settings -> Fault? in
            guard let index = settings.faults.firstIndex(where: { $0.name == name }) else { return nil }
            return settings.faults.remove(at: index)
        }
    }
}
