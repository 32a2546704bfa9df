import Synchronization

extension MockServer {
    /// The faults in force, in the order they are tried.
    public var faultsInForce: [Fault] { faults.all }

    /// Puts `faults` in force from the next request on, replacing those before (`[]` for none).
    public func setFaults(_ faults: [Fault]) { self.faults.replace(faults) }

    /// Adds a fault after those in force.
    public func addFault(_ fault: Fault) { faults.replace(faults.all + [fault]) }
}
