public import HammockJSON
import HammockStore

/// Reshapes records on their way out and request bodies on their way in.
///
/// Use it when an existing API names or nests things differently from the stored records. Every hook
/// has a default that changes nothing, so a serializer implements only what it needs:
///
/// ```swift
/// struct Enveloped: MockSerializer {
///     func serialize(collection records: [JSONObject], of resource: MockResource) -> JSON {
///         ["data": .array(records.map { .object($0) }), "count": .integer(records.count)]
///     }
/// }
/// let server = try await MockServer(resources: [people], serializer: Enveloped())
/// server.setSerializer(Enveloped(), for: "people")   // or per resource, at any time
/// ```
public protocol MockSerializer: Sendable {
    /// The body for one record (show, create, update).
    func serialize(record: JSONObject, of resource: MockResource) -> JSON
    /// The body for a list of records (index, nested index).
    func serialize(collection records: [JSONObject], of resource: MockResource) -> JSON
    /// The parameters a create or update body stands for. Throw an ``HTTPProblem`` to reject it.
    func parameters(fromBody body: JSONObject, for resource: MockResource) throws -> JSONObject
}

extension MockSerializer {
    /// The record as the resource answers it (``MockResource/answer(_:)``: without write-only fields, and
    /// without `null` members for a resource that ``MockResource/omitsNulls``); otherwise unchanged.
    public func serialize(record: JSONObject, of resource: MockResource) -> JSON {
        .object(resource.answer(record))
    }

    /// The records as an array, each as ``serialize(record:of:)`` shows it.
    public func serialize(collection records: [JSONObject], of resource: MockResource) -> JSON {
        .array(records.map { .object(resource.answer($0)) })
    }

    /// The body unchanged.
    public func parameters(fromBody body: JSONObject, for resource: MockResource) throws -> JSONObject { body }
}

/// The serializer that changes nothing: records go out as stored, bodies come in as sent.
///
/// ```swift
/// server.setSerializer(DefaultSerializer(), for: "people")   // same as removeSerializer(for:)
/// ```
public struct DefaultSerializer: MockSerializer {
    /// Creates the default serializer.
    public init() {}
}
