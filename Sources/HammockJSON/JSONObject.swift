/// A JSON object: string keys mapped to values, in insertion order.
///
/// Setting an existing key replaces its value in place; setting a new key appends it; setting `nil`
/// removes the key. Lookups are linear for small objects and hashed for large ones.
///
/// ```swift
/// var person: JSONObject = ["id": 1, "name": "john"]
/// person["numberOfKids"] = 2
/// person.keys            // ["id", "name", "numberOfKids"]
/// person["name"] = nil   // removes "name"
/// ```
public struct JSONObject: Sendable {
    @usableFromInline var _keys: [String]
    @usableFromInline var _values: [JSON]
    /// Positions of keys, kept only once the object is large enough for hashing to pay off.
    @usableFromInline var index: [String: Int]?

    @usableFromInline static var indexThreshold: Int { 12 }

    /// Creates an empty object.
    public init() {
        _keys = []
        _values = []
        index = nil
    }

    /// Creates an empty object with room for `minimumCapacity` keys.
    public init(minimumCapacity: Int) {
        self.init()
        _keys.reserveCapacity(minimumCapacity)
        _values.reserveCapacity(minimumCapacity)
    }

    /// The keys, in order.
    public var keys: [String] { _keys }

    /// The values, in the order of their keys.
    public var values: [JSON] { _values }

    /// The number of keys.
    public var count: Int { _keys.count }

    /// Whether the object has no keys.
    public var isEmpty: Bool { _keys.isEmpty }

    /// The position of `key`, if present.
    @inlinable
    public func position(of key: String) -> Int? {
        if let index { return index[key] }
        return _keys.firstIndex(of: key)
    }

    /// The value for `key`, looked for first at `position`: a store's records hold their columns in the
    /// schema's order, and finding a field by its place costs one comparison of the key where a search
    /// costs up to one per field.
    @inlinable
    package func value(at position: Int, named key: String) -> JSON? {
        if position < _keys.count, _keys[position] == key { return _values[position] }
        return self[key]
    }

    /// Whether the object's keys are `keys`, in that order.
    package func hasKeys(_ keys: [String]) -> Bool { _keys == keys }

    /// An object with the keys of `shape` (which must have `values.count` of them), in its order, and
    /// `values`: the keys' storage is shared with `shape`, not copied, so a million records of one
    /// table hold their field names once (a copy of six names cost 144 bytes a record).
    package init(keysOf shape: JSONObject, values: [JSON]) {
        precondition(shape._keys.count == values.count, "an object's values must match its keys")
        _keys = shape._keys
        _values = values
        index = shape.index
    }

    /// Whether the object has `key` (possibly with a `null` value).
    public func contains(_ key: String) -> Bool { position(of: key) != nil }

    /// The value for `key`; `nil` when the key is absent, `.null` when it is present with `null`.
    @inlinable
    public subscript(key: String) -> JSON? {
        get {
            guard let position = position(of: key) else { return nil }
            return _values[position]
        }
        set {
            if let newValue {
                if let position = position(of: key) {
                    _values[position] = newValue
                } else {
                    appendNew(key, newValue)
                }
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Appends a key that is known not to be present yet. Used by the parser's fast path.
    @usableFromInline
    mutating func appendNew(_ key: String, _ value: JSON) {
        _keys.append(key)
        _values.append(value)
        if index != nil {
            index?[key] = _keys.count - 1
        } else if _keys.count > Self.indexThreshold {
            rebuildIndex()
        }
    }

    /// An object of keys known to be distinct, with their values (the parser's path).
    @usableFromInline
    init(uniqueKeys keys: [String], values: [JSON]) {
        _keys = keys
        _values = values
        index = nil
        if keys.count > Self.indexThreshold { rebuildIndex() }
    }

    /// Removes `key` and returns its value, if it was present.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSON? {
        guard let position = position(of: key) else { return nil }
        _keys.remove(at: position)
        let value = _values.remove(at: position)
        if index != nil { rebuildIndex() }
        return value
    }

    @usableFromInline
    mutating func rebuildIndex() {
        guard _keys.count > Self.indexThreshold else {
            index = nil
            return
        }
        var positions = [String: Int](minimumCapacity: _keys.count)
        for (position, key) in _keys.enumerated() { positions[key] = position }
        index = positions
    }
}

extension JSONObject: Sequence {
    /// Iterates over `(key, value)` pairs in order.
    public struct Iterator: IteratorProtocol {
        let keys: [String]
        let values: [JSON]
        var position = 0

        /// The next pair, or `nil` at the end.
        public mutating func next() -> (key: String, value: JSON)? {
            guard position < keys.count else { return nil }
            defer { position += 1 }
            return (keys[position], values[position])
        }
    }

    /// Iterates over `(key, value)` pairs in order.
    public func makeIterator() -> Iterator { Iterator(keys: _keys, values: _values) }

    /// The number of keys, so sequence algorithms can reserve space.
    public var underestimatedCount: Int { _keys.count }
}

extension JSONObject: Hashable {
    /// Objects are equal when they have the same keys with equal values, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs._keys == rhs._keys { return lhs._values == rhs._values }
        for (position, key) in lhs._keys.enumerated() {
            guard let other = rhs[key], other == lhs._values[position] else { return false }
        }
        return true
    }

    /// A hash that does not depend on key order, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for position in _keys.indices {
            var pairHasher = Hasher()
            pairHasher.combine(_keys[position])
            pairHasher.combine(_values[position])
            combined = combined &+ pairHasher.finalize()
        }
        hasher.combine(count)
        hasher.combine(combined)
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// Creates an object whose keys keep the order of the literal.
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self.init(minimumCapacity: elements.count)
        for (key, value) in elements { self[key] = value }
    }
}

extension JSONObject: CustomStringConvertible {
    /// The compact serialized form.
    public var description: String { JSON.object(self).serializedString() }
}
