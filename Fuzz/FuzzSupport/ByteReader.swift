/// Reads a fuzz input as a series of choices, for targets that build structured input (a document, a
/// configuration) from raw bytes: each call takes the next byte, and an exhausted input reads as zeros,
/// so every input builds something and small changes to it change the structure a little.
public struct ByteReader {
    private let bytes: [UInt8]
    private var position = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The next byte (0 past the end).
    public mutating func byte() -> UInt8 {
        defer { position += 1 }
        return position < bytes.count ? bytes[position] : 0
    }

    /// A number in `0..<count` (count at least 1).
    public mutating func choose(_ count: Int) -> Int { Int(byte()) % max(count, 1) }

    /// One of `options`.
    public mutating func pick<T>(_ options: [T]) -> T { options[choose(options.count)] }

    /// Whether what is left is worth reading.
    public var isExhausted: Bool { position >= bytes.count }
}
