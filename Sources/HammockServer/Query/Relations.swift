import HammockJSON
import HammockStore

/// `_embed` and `_expand`: records of related resources added to the records answered, only along
/// declared parents.
///
/// `GET /people?_embed=cars` adds to each person a `cars` array of their cars; `GET /cars?_expand=person`
/// adds to each car its `person` object (`null` without one).
struct Relations {
    struct Embedding {
        var name: String
        var child: ResourceSchema
        var foreignKey: ResourceSchema.ForeignKey
    }

    struct Expansion {
        var name: String
        var parent: ResourceSchema
        var foreignKey: ResourceSchema.ForeignKey
    }

    var embeddings: [Embedding] = []
    var expansions: [Expansion] = []

    var isEmpty: Bool { embeddings.isEmpty && expansions.isEmpty }

    /// The relations named in `embed` and `expand`, checked against the resources there are.
    /// - Throws: 400 naming the parameter and listing what may be named, for a resource that is not a
    ///   child (for `_embed`) or a parent (for `_expand`) of `schema`, or a name that is also a field.
    init(
        embed: [String], expand: [String], of schema: ResourceSchema, among schemas: [String: ResourceSchema]
    )
        throws(HTTPProblem)
    {
        // Most lists embed nothing: the children are not looked for (0.6% of a sorted page's CPU).
        let children = embed.isEmpty ? [] : Self.children(of: schema, among: schemas)
        for name in embed {
            let (child, foreignKey) = try Self.child(named: name, for: "_embed", of: schema, among: children)
            try Self.checkFree(name, "_embed", in: schema)
            embeddings.append(Embedding(name: name, child: child, foreignKey: foreignKey))
        }
        for name in expand {
            let match = schema.foreignKeys.first { name == $0.parent || name == Inflection.singular(of: $0.parent) }
            guard let foreignKey = match, let parent = schemas[foreignKey.parent] else {
                let names = schema.foreignKeys.map { Inflection.singular(of: $0.parent) }
                throw HTTPProblem.badQuery(
                    "_expand", "names '\(name)', which is not a parent of \(schema.name)\(Self.list(names))",
                    extensions: ["resources": .array(names.map(JSON.string))])
            }
            try Self.checkFree(name, "_expand", in: schema)
            expansions.append(Expansion(name: name, parent: parent, foreignKey: foreignKey))
        }
    }

    /// The resources with a foreign key to `schema`, by name.
    static func children(
        of schema: ResourceSchema, among schemas: [String: ResourceSchema]
    ) -> [(ResourceSchema, ResourceSchema.ForeignKey)] {
        schemas.values.compactMap { child in child.foreignKey(toParent: schema.name).map { (child, $0) } }
            .sorted { $0.0.name < $1.0.name }
    }

    /// The child resource `name` among `children` (those of ``children(of:among:)``).
    /// - Throws: 400 for `parameter`, listing the children there are.
    static func child(
        named name: String, for parameter: String, of schema: ResourceSchema,
        among children: [(ResourceSchema, ResourceSchema.ForeignKey)]
    ) throws(HTTPProblem) -> (ResourceSchema, ResourceSchema.ForeignKey) {
        guard let found = children.first(where: { $0.0.name == name }) else {
            let names = children.map(\.0.name)
            throw HTTPProblem.badQuery(
                parameter, "names '\(name)', which is not a child resource of \(schema.name)\(list(names))",
                extensions: ["resources": .array(names.map(JSON.string))])
        }
        return found
    }

    static func list(_ names: [String]) -> String {
        names.isEmpty ? " (it has none)" : "; it has \(names.joined(separator: ", "))"
    }

    static func checkFree(_ name: String, _ parameter: String, in schema: ResourceSchema) throws(HTTPProblem) {
        guard !schema.columns.contains(where: { $0.name == name }) else {
            throw HTTPProblem.badQuery(parameter, "names '\(name)', which is also a field of \(schema.name)")
        }
    }

    /// `records` with their related records added. Each relation is one query for the keys the records
    /// hold, which the stores answer from an index: the cost follows the page, not the related table.
    func apply(to records: [JSONObject], of schema: ResourceSchema, store: any MockStore) async throws -> [JSONObject] {
        guard !isEmpty, !records.isEmpty else { return records }
        var result = records
        for embedding in embeddings {
            let keys = Self.distinct(records.map { $0[schema.key.name] ?? .null })
            var byParent: [RecordKey: [JSON]] = [:]
            let children = ListQuery(filters: [.init(field: embedding.foreignKey.name, values: keys)])
            for child in try await store.storedRecords(of: embedding.child, answering: children).page {
                guard let parentKey = child.fields[embedding.foreignKey.name], !parentKey.isNull else { continue }
                byParent[RecordKey(parentKey), default: []].append(.object(child.fields))
            }
            for index in result.indices {
                let key = result[index][schema.key.name] ?? .null
                result[index][embedding.name] = .array(byParent[RecordKey(key)] ?? [])
            }
        }
        for expansion in expansions {
            var parents: [RecordKey: JSON] = [:]
            let keys = Self.distinct(
                records.compactMap { record in
                    (record[expansion.foreignKey.name]).flatMap { $0.isNull ? nil : $0 }
                })
            let query = ListQuery(filters: [.init(field: expansion.parent.key.name, values: keys)])
            for parent in try await store.storedRecords(of: expansion.parent, answering: query).page {
                parents[RecordKey(parent.fields[expansion.parent.key.name] ?? .null)] = .object(parent.fields)
            }
            for index in result.indices {
                let parentKey = result[index][expansion.foreignKey.name] ?? .null
                result[index][expansion.name] = parentKey.isNull ? .null : (parents[RecordKey(parentKey)] ?? .null)
            }
        }
        return result
    }

    /// `values` without repeats, in their first order.
    static func distinct(_ values: [JSON]) -> [JSON] {
        var seen = Set<RecordKey>()
        return values.filter { seen.insert(RecordKey($0)).inserted }
    }
}
