import Synchronization

/// One method of a generated `<Name>Mock`: the answer it gives and the calls it received.
///
/// ```swift
/// @API protocol People: Sendable {
///     @GET("/people/{id}") func person(id: Int) async throws -> Person
/// }
/// let mock = PeopleMock()
/// mock.on.person.answer { id in Person(id: id, name: "Ada") }
/// let model = PersonModel(api: mock)          // takes any People
/// await model.load(3)
/// #expect(mock.on.person.calls == [3])
/// ```
/// A call with no answer set throws ``UnansweredMockCall`` naming the method. Arguments are recorded as
/// the method received them: one parameter as its value, several as a labeled tuple, none as `()`.
public final class MockMethod<Arguments: Sendable, Result: Sendable>: Sendable {
    private struct State {
        var answer: (@Sendable (Arguments) async throws -> Result)?
        var calls: [Arguments] = []
    }

    private let state = Mutex(State())
    /// The method's name, as the protocol declares it (`person(id:)`).
    public let name: String

    /// A method named `name`, with no answer yet.
    public init(_ name: String) { self.name = name }

    /// Answers each call with what `answer` returns or throws.
    public func answer(_ answer: @escaping @Sendable (Arguments) async throws -> Result) {
        state.withLock { $0.answer = answer }
    }

    /// Answers each call with `value`.
    public func returns(_ value: Result) { answer { _ in value } }

    /// Answers each call by throwing `error`.
    public func `throws`(_ error: any Error) { answer { _ in throw error } }

    /// The arguments of every call so far, oldest first.
    public var calls: [Arguments] { state.withLock { $0.calls } }

    /// How many calls there were.
    public var callCount: Int { state.withLock { $0.calls.count } }

    /// Forgets the calls (the answer stays).
    public func resetCalls() { state.withLock { $0.calls.removeAll() } }

    /// Records the call and answers it (what the generated method does).
    public func call(_ arguments: Arguments) async throws -> Result {
        let answer = state.withLock { state in
            state.calls.append(arguments)
            return state.answer
        }
        guard let answer else { throw UnansweredMockCall(method: name) }
        return try await answer(arguments)
    }
}

/// A generated mock's method was called without an answer set.
public struct UnansweredMockCall: Error, Sendable, Hashable, CustomStringConvertible {
    /// The method, as the protocol declares it (`person(id:)`).
    public var method: String

    /// The error for a call of `method`.
    public init(method: String) { self.method = method }

    public var description: String {
        let base = method.split(separator: "(").first.map(String.init) ?? method
        return "\(method) was called with no answer set: set mock.on.\(base).returns(…), .answer { … } or .throws(…)"
    }
}
