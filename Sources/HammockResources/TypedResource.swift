public import Foundation
public import HammockClient
import HammockJSON

/// A ``Resource`` seen as a `Value`: the same canonical object per URL (its data, error, requests and
/// observers are the resource's), with its data decoded once per change.
///
/// ```swift
/// let person = service.resource(people.endpoints.person(id: 3))   // TypedResource<Person>
/// let ada = try await person.loadIfNeeded()                         // fresh, or loaded: a Person
/// Text(person.value?.name ?? "…")                                    // SwiftUI: observes the resource
/// ```
/// Two typed views of one URL share the resource and its decoded value. A view reads `value` as often
/// as it likes: the data is decoded when it changed, not on each read (a 304, or a 200 with the same
/// body, changes nothing).
@MainActor
public struct TypedResource<Value: Sendable> {
    /// The resource underneath: its state, its requests, its observers.
    public let resource: Resource
    /// Makes the value of the resource's data.
    let decode: @Sendable (Entity) throws -> Value

    /// A typed view of `resource`, its data made into a `Value` by `decode`.
    public init(_ resource: Resource, decode: @escaping @Sendable (Entity) throws -> Value) {
        self.resource = resource
        self.decode = decode
    }

    /// The URL.
    public var url: URL { resource.url }

    /// The latest data as a `Value`; `nil` when there is none, or it does not decode (``decodingError``
    /// says why). Reading it observes the resource, as reading `latestData` does.
    public var value: Value? { try? result?.get() }

    /// Why the latest data does not decode as a `Value`, if it does not.
    public var decodingError: ResourceError? {
        guard case .failure(let error)? = result else { return nil }
        return error
    }

    /// The error of the latest load, if it failed after the latest data arrived.
    public var latestError: ResourceError? { resource.latestError }
    /// Whether a load is in flight.
    public var isLoading: Bool { resource.isLoading }
    /// Whether the data is fresh: ``loadIfNeeded()`` would send nothing.
    public var isUpToDate: Bool { resource.isUpToDate }

    /// The latest data decoded, from the resource's memo while its data has not changed. Reading it
    /// observes the resource's data.
    var result: Result<Value, ResourceError>? {
        guard resource.latestData != nil else { return nil }
        return memoized()
    }

    /// The decoded data without observation tracking: `nil` when there is no data.
    ///
    /// Why a class per value type, found by `ObjectIdentifier(Value.self)`: a fresh typed
    /// `loadIfNeeded()` cost 479 ns against 114 ns untyped (scripts/bench resources), much of it in
    /// copying the entity to look at it and in casting an `any Sendable` back to the value's type; a
    /// class cast and a version number cost less.
    func memoized() -> Result<Value, ResourceError>? {
        let key = ObjectIdentifier(Value.self)
        if let stored = resource.decoded[key] {
            // Safe: only `memoized()` and `override(with:)` write this table, each storing a
            // `DecodedValue<Value>` under `ObjectIdentifier(Value.self)`, so the object under this key
            // is a `DecodedValue<Value>` (a checked `as?` cost a generic class cast per read).
            let memo = unsafeDowncast(stored, to: DecodedValue<Value>.self)
            if memo.version == resource.dataVersion { return memo.value.map(Result.success) ?? memo.error.map(Result.failure) }
        }
        guard let entity = resource.latestDataUntracked else { return nil }
        let decoded: Result<Value, ResourceError>
        do {
            decoded = .success(try decode(entity))
        } catch {
            decoded = .failure(
                ResourceError(
                    userMessage: "The data of \(resource.url.absoluteString) is not a \(Value.self): \(error)",
                    cause: .pipeline(error), timestamp: entity.timestamp))
        }
        resource.decoded[key] = DecodedValue(version: resource.dataVersion, result: decoded)
        return decoded
    }

    /// The decoded value when the memo holds one for the current data: the fast path of a fresh
    /// `loadIfNeeded()`, which builds no `Result` (its generic metadata cost a lookup per call).
    @inlinable
    func memoizedValue() -> Value? {
        guard let stored = resource.decoded[ObjectIdentifier(Value.self)] else { return nil }
        // Safe for the reason `memoized()` gives.
        let memo = unsafeDowncast(stored, to: DecodedValue<Value>.self)
        return memo.version == resource.dataVersion ? memo.value : nil
    }

    /// The value, loading it first if it is not fresh (``Resource/loadIfNeeded()``'s rules: a load in
    /// flight is joined, nothing is sent while the data is fresh).
    /// - Throws: ``ResourceError``: the load failed, or its data does not decode.
    ///
    /// Inlinable, so that it is specialized for `Value` where it is called: unspecialized, each call
    /// looked up the generic metadata of what it touched (a fresh call cost 2.2-2.6× the untyped
    /// `loadIfNeeded()`; scripts/bench resources, docs/benchmarks.md).
    @discardableResult @inlinable
    public func loadIfNeeded() async throws(ResourceError) -> Value {
        if let request = resource.loadIfNeeded() { _ = try await request.value() }
        if let value = memoizedValue() { return value }
        return try current()
    }

    /// Loads the value now (``Resource/load()``) and returns it.
    /// - Throws: ``ResourceError``: the load failed, or its data does not decode.
    @discardableResult
    public func load() async throws(ResourceError) -> Value {
        _ = try await resource.load().value()
        return try current()
    }

    /// The value there is now, or the error that keeps it from being there.
    @usableFromInline
    func current() throws(ResourceError) -> Value {
        switch memoized() {
        case .success(let value)?: return value
        case .failure(let error)?: throw error
        case nil:
            throw resource.latestError
                ?? ResourceError(
                    userMessage: "\(resource.url.absoluteString) has no data", cause: .pipeline(NoDataYet()),
                    timestamp: resource.core.now)
        }
    }

    /// Shows `value` at once, as if the server had sent it (an optimistic update): its observers hear
    /// `.newData(.localOverride)`, and `rollBack()` on what it returns puts the previous data back.
    @discardableResult
    public func override(with value: Value) -> LocalOverride where Value: Encodable {
        var entity = resource.latestData ?? Entity(content: value, contentType: "application/json")
        entity.bytes = (try? RestClient.defaultEncoder().encode(value)).map(Array.init) ?? []
        // Untyped readers of the same resource see JSON, as from the network (`jsonContent`).
        entity.content = (try? JSON(parsing: entity.bytes)) ?? value
        entity.contentType = "application/json"
        let local = resource.overrideLocalData(with: entity)
        // The value itself, not a decoding of the bytes: what was given is what is shown.
        resource.decoded[ObjectIdentifier(Value.self)] = DecodedValue(version: resource.dataVersion, result: .success(value))
        return local
    }
}

extension TypedResource where Value: Decodable {
    /// A typed view of `resource` whose data is decoded as JSON by `decoder` (the client's ISO 8601
    /// dates by default); a local override of the value itself is taken as it is.
    public init(_ resource: Resource, decoder: @escaping @Sendable () -> JSONDecoder = RestClient.defaultDecoder) {
        self.init(resource) { entity in
            if let value = entity.content as? Value { return value }
            return try decoder().decode(Value.self, from: Data(entity.bytes))
        }
    }
}

extension Service {
    /// The typed resource an endpoint of an `@API` client reads: the resource at its target (path and
    /// query, placeholders filled), decoded as the method's result. Its request's header fields are not
    /// sent: configure headers on the service. An endpoint whose target cannot be made (a path value of
    /// `..`) gives a resource that fails to load, saying why.
    ///
    /// ```swift
    /// let person = api.resource(people.endpoints.person(id: 3))
    /// ```
    public func resource<Value: Decodable & Sendable>(
        _ endpoint: Endpoint<Value>, decoder: @escaping @Sendable () -> JSONDecoder = RestClient.defaultDecoder
    ) -> TypedResource<Value> {
        let resource: Resource
        do {
            resource = self.resource(try endpoint.target())
        } catch {
            resource = self.resource(absoluteURL: ResourceURL.invalid(endpoint.request.template, reason: "\(error)"))
        }
        return TypedResource(resource, decoder: decoder)
    }

    /// The resource at `path` seen as a `T`.
    ///
    /// ```swift
    /// let people = api.resource("/people", as: [Person].self)
    /// ```
    public func resource<T: Decodable & Sendable>(
        _ path: String, as type: T.Type, decoder: @escaping @Sendable () -> JSONDecoder = RestClient.defaultDecoder
    ) -> TypedResource<T> {
        TypedResource(resource(path), decoder: decoder)
    }
}

extension Resource {
    /// This resource seen as a `T`, decoded from JSON.
    public func typed<T: Decodable & Sendable>(
        as type: T.Type, decoder: @escaping @Sendable () -> JSONDecoder = RestClient.defaultDecoder
    ) -> TypedResource<T> {
        TypedResource(self, decoder: decoder)
    }

    /// The data, loading it first if it is not fresh: what ``loadIfNeeded()`` brings, or what is there.
    /// - Throws: ``ResourceError`` when the load fails.
    public func ensureData() async throws(ResourceError) -> Entity {
        if let request = loadIfNeeded() { return try await request.value() }
        if let data = latestData { return data }
        throw latestError
            ?? ResourceError(userMessage: "\(url.absoluteString) has no data", cause: .pipeline(NoDataYet()), timestamp: core.now)
    }
}

/// A resource's data decoded as a `Value`, and the ``Resource/dataVersion`` it was decoded from.
@usableFromInline
final class DecodedValue<Value: Sendable>: Sendable {
    @usableFromInline let version: Int
    /// The value, or why the data is not one.
    @usableFromInline let value: Value?
    let error: ResourceError?

    init(version: Int, result: Result<Value, ResourceError>) {
        self.version = version
        switch result {
        case .success(let value): (self.value, error) = (value, nil)
        case .failure(let failure): (value, error) = (nil, failure)
        }
    }
}

/// A resource asked for its value had neither data nor an error (a load cancelled before it answered).
struct NoDataYet: Error {}

extension Service: WriteObserver {
    /// Invalidates what a write sent through a `RestClient` that reports to this service touched: the
    /// resource at its URL and its ancestors (as the service's own mutations do, by its configuration),
    /// what lived below a deleted one, and every resource at each path its `@Invalidates` names.
    /// Observed resources among them reload.
    ///
    /// ```swift
    /// let client = RestClient(baseURL: base, writeObservers: [service])
    /// let people = PeopleClient(client: client)
    /// try await people.create(person)         // service.resource("/people") reloads
    /// ```
    public nonisolated func clientDidWrite(_ write: ClientWrite) async {
        await noteWrite(write)
    }

    func noteWrite(_ write: ClientWrite) {
        core.invalidateAfterMutation(
            at: write.url, method: write.method, configuration: core.computeConfiguration(for: write.url),
            alsoAt: write.invalidates)
    }

    /// A client for the service's base URL that sends through the service's transport and interceptors,
    /// and reports its writes to the service: what an `@API` client built on it changes, the service's
    /// resources show.
    ///
    /// ```swift
    /// let people = PeopleClient(client: try service.restClient())
    /// ```
    /// - Throws: `RestError` with `.invalidRequest` when the service has no valid base URL.
    public func restClient(
        makeEncoder: @escaping @Sendable () -> JSONEncoder = RestClient.defaultEncoder,
        makeDecoder: @escaping @Sendable () -> JSONDecoder = RestClient.defaultDecoder
    ) throws(RestError) -> RestClient {
        guard let baseURL, core.baseProblem == nil else {
            throw RestError(
                .invalidRequest("the service has no valid base URL" + (core.baseProblem.map { ": \($0)" } ?? "")),
                method: .get, url: baseURL?.absoluteString ?? "")
        }
        return RestClient(
            baseURL: baseURL, transport: core.transport.transport, interceptors: core.transport.interceptors,
            makeEncoder: makeEncoder, makeDecoder: makeDecoder, writeObservers: [self])
    }

    /// Signs the user out, in the order that leaves nothing of theirs behind: the session's credentials
    /// go first (so no request still in flight is signed again), then configuration is computed afresh
    /// (headers that held the user's token), every resource is wiped (loads in flight cancelled, data and
    /// cached copies removed), and the call returns once the cache has forgotten them.
    ///
    /// ```swift
    /// await api.signOut(authenticator)
    /// ```
    public func signOut(_ authenticator: Authenticator? = nil) async {
        if let authenticator { await authenticator.signOut() }
        invalidateConfiguration()
        wipeResources()
        await waitForCacheOperations()
    }
}

extension TypedResource where Value: Encodable {
    /// A mutation in one call, as TanStack Query's `useMutation` shapes it: `change` is applied to the
    /// value and shown at once (an optimistic update), `send` carries it to the server, a failure puts
    /// the previous data back and is rethrown, and either way the resource is invalidated once the
    /// request settles (an observed one reloads), so the server has the last word.
    ///
    /// ```swift
    /// try await person.mutate { $0.name = "Ada Lovelace" } send: {
    ///     try await people.rename(id: 1, changes: ["name": "Ada Lovelace"])
    /// }
    /// ```
    /// Without data yet there is nothing to change locally: only `send` and the invalidation happen.
    /// If something newer replaced the optimistic value meanwhile (a load, another override), a failure
    /// leaves that in place rather than rolling back over it.
    @discardableResult
    public func mutate<Outcome: Sendable>(
        _ change: (inout Value) -> Void, send: () async throws -> Outcome
    ) async throws -> Outcome {
        var local: LocalOverride?
        if var next = value {
            change(&next)
            local = override(with: next)
        }
        defer {
            resource.invalidate()
            if resource.configuration.reloadsObservedResourcesWhenInvalidated, resource.hasObservers {
                resource.loadIfNeeded()
            }
        }
        do {
            return try await send()
        } catch {
            local?.rollBack()
            throw error
        }
    }
}
