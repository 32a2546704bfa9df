package import HammockJSON

/// A record's key as the stores identify records: a string by its bytes, as SQLite compares it.
///
/// Swift's `String` equality is canonical equivalence: the composed "é" (U+00E9) equals "e" followed by
/// U+0301. SQLite, URLs and JSON clients see two different keys there. A dictionary keyed by `JSON`
/// therefore merged two records that SQLite keeps apart. Worse, a write under one spelling found the
/// record stored under the other, while the table's key order (by bytes) pointed at a third.
package struct RecordKey: Hashable, Sendable {
    package let key: JSON

    package init(_ key: JSON) { self.key = key }

    package static func == (lhs: RecordKey, rhs: RecordKey) -> Bool {
        switch (lhs.key, rhs.key) {
        case (.string(let left), .string(let right)): left.utf8.elementsEqual(right.utf8)
        case (.integer(let left), .integer(let right)): left == right
        default: lhs.key == rhs.key
        }
    }

    package func hash(into hasher: inout Hasher) {
        switch key {
        case .string(var text):
            hasher.combine(0 as UInt8)
            // `withUTF8` makes a bridged string contiguous first, so equal bytes always hash alike.
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        case .integer(let number):
            hasher.combine(1 as UInt8)
            hasher.combine(number)
        default:
            hasher.combine(2 as UInt8)
            hasher.combine(key)
        }
    }
}

extension JSON {
    /// Whether two key values name the same record (strings compared by their bytes; see ``RecordKey``).
    package func isSameKey(as other: JSON) -> Bool { RecordKey(self) == RecordKey(other) }
}
