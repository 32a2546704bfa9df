import HammockJSON
import HammockStore
import NIOCore
import PostgresNIO

/// How each field type is kept in PostgreSQL, and JSON values to and from its columns.
///
/// Strings (and dates and base64 blobs, which are strings in JSON) are `bytea` of their UTF-8 bytes:
/// `text` cannot hold NUL, and `bytea` orders and compares byte for byte, as the other stores do (so
/// "é" composed and decomposed stay two keys). Doubles keep -0.0; `json` fields are their serialized bytes.
enum Columns {
    static func sqlType(_ type: FieldType) -> String {
        switch type {
        case .integer: "bigint"
        case .float: "double precision"
        case .boolean: "boolean"
        case .string, .date, .blob, .json: "bytea"
        }
    }

    /// Whether the field has a lowercased copy, for `_like` and `q`: the types whose values are strings.
    static func hasLoweredCopy(_ type: FieldType) -> Bool {
        switch type {
        case .string, .date, .blob: true
        case .integer, .float, .boolean, .json: false
        }
    }

    /// The key column's type: integers, or any string as bytes.
    static func keyType(_ type: FieldType) -> String { type == .integer ? "bigint" : "bytea" }

    /// Appends `value` as a parameter for a column of `type`.
    /// - Throws: `StoreError.storageFailure` for a value of another kind (validation keeps them out).
    static func bind(_ value: JSON, as type: FieldType, to binds: inout PostgresBindings) throws {
        switch (type, value) {
        case (_, .null): binds.appendNull()
        case (.json, _): binds.append(ByteBuffer(bytes: value.serialized()))
        case (.boolean, .bool(let flag)): binds.append(flag)
        case (.integer, .integer(let number)): binds.append(number)
        case (.float, _):
            guard let number = value.doubleValue else { throw mismatch(value, type) }
            binds.append(number)
        case (.string, .string(let text)), (.date, .string(let text)), (.blob, .string(let text)):
            binds.append(ByteBuffer(string: text))
        default: throw mismatch(value, type)
        }
    }

    /// Appends the lowercased copy of `value` (a string's `lowercased()` bytes, as the query matcher folds them).
    static func bindLowered(_ value: JSON, to binds: inout PostgresBindings) {
        if case .string(let text) = value {
            binds.append(ByteBuffer(string: text.lowercased()))
        } else {
            binds.appendNull()
        }
    }

    /// Appends a key.
    static func bindKey(_ key: JSON, as type: FieldType, to binds: inout PostgresBindings) throws {
        switch key {
        case .integer(let number) where type == .integer: binds.append(number)
        case .string(let text) where type != .integer: binds.append(ByteBuffer(string: text))
        default: throw mismatch(key, type)
        }
    }

    /// Whether `key` can be a key of this type at all (a string never names an integer-keyed record).
    static func isKey(_ key: JSON, of type: FieldType) -> Bool {
        switch key {
        case .integer: type == .integer
        case .string: type != .integer
        default: false
        }
    }

    static func mismatch(_ value: JSON, _ type: FieldType) -> StoreError {
        .storageFailure("cannot store \(value.kindName) in a \(type.rawValue) column")
    }

    /// The value of one cell of a column of `type`.
    static func decode(_ cell: PostgresCell, as type: FieldType) throws -> JSON {
        switch type {
        case .integer: return try cell.decode(Int?.self).map(JSON.integer) ?? .null
        case .float: return try cell.decode(Double?.self).map(JSON.double) ?? .null
        case .boolean: return try cell.decode(Bool?.self).map(JSON.bool) ?? .null
        case .string, .date, .blob:
            guard let buffer = try cell.decode(ByteBuffer?.self) else { return .null }
            return .string(String(decoding: buffer.readableBytesView, as: UTF8.self))
        case .json:
            guard let buffer = try cell.decode(ByteBuffer?.self) else { return .null }
            return try JSON(parsing: buffer.readableBytesView)
        }
    }

    /// The key of a row.
    static func decodeKey(_ cell: PostgresCell, as type: FieldType) throws -> JSON {
        if type == .integer { return .integer(try cell.decode(Int.self)) }
        let buffer = try cell.decode(ByteBuffer.self)
        return .string(String(decoding: buffer.readableBytesView, as: UTF8.self))
    }

    /// The key of a row that selected only `k`.
    static func key(of row: PostgresRow, as type: FieldType) throws -> JSON {
        if type == .integer { return .integer(try row.decode(Int.self)) }
        let buffer = try row.decode(ByteBuffer.self)
        return .string(String(decoding: buffer.readableBytesView, as: UTF8.self))
    }

    /// `k, "f:name", …` in the schema's column order (the key first).
    static func selectList(_ schema: ResourceSchema) -> String {
        (["k"] + schema.columns.dropFirst().map { Names.field($0.name) }).joined(separator: ", ")
    }

    /// A record from a row selected with ``selectList(_:)``.
    static func record(_ row: PostgresRow, _ schema: ResourceSchema) throws -> JSONObject {
        var record = JSONObject(minimumCapacity: schema.columns.count)
        var index = 0
        for cell in row {
            guard index < schema.columns.count else { break }
            let column = schema.columns[index]
            record[column.name] = index == 0 ? try decodeKey(cell, as: column.type) : try decode(cell, as: column.type)
            index += 1
        }
        return record
    }
}
