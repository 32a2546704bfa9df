public import HammockJSON

/// A record as a store holds it: its fields, and their JSON, serialized once when the record was
/// written.
///
/// Lists are served by joining these bytes instead of serializing every record on every request;
/// a write replaces the record, and with it the bytes, so they never describe an older version.
public struct StoredRecord: Sendable, Hashable {
    /// The record's fields, every column in order.
    public let fields: JSONObject
    /// `JSON.object(fields).serialized()`.
    public let json: [UInt8]

    /// Serializes `fields` once.
    public init(_ fields: JSONObject) {
        self.fields = fields
        self.json = JSON.object(fields).serialized()
    }

    /// A JSON array of `records`, byte for byte what `JSON.array(...).serialized()` writes for their fields.
    public static func jsonArray(_ records: [StoredRecord]) -> [UInt8] {
        var size = 2
        for record in records { size += record.json.count + 1 }
        var output: [UInt8] = []
        output.reserveCapacity(size)
        output.append(UInt8(ascii: "["))
        for (index, record) in records.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: record.json)
        }
        output.append(UInt8(ascii: "]"))
        return output
    }
}
