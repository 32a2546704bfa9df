extension MockResource {
    /// Orders resources so every parent comes before its children; resources whose parents are not in
    /// the list keep their place.
    /// - Throws: ``SchemaError`` if parents form a cycle.
    package static func parentsFirst(_ resources: [MockResource]) throws(SchemaError) -> [MockResource] {
        var ordered: [MockResource] = []
        var placed = Set<String>()
        var pending = resources
        while !pending.isEmpty {
            let names = Set(pending.map(\.name))
            let ready = pending.filter { resource in
                resource.parents.allSatisfy { placed.contains($0.resource) || !names.contains($0.resource) }
            }
            guard !ready.isEmpty else {
                throw SchemaError(resource: pending.first?.name ?? "?", message: "parents form a cycle")
            }
            ordered += ready
            placed.formUnion(ready.map(\.name))
            pending.removeAll { resource in ready.contains { $0.name == resource.name } }
        }
        return ordered
    }
}
