import FuzzSupport
import HammockJSON

/// The JSON parser: never a crash on any bytes, and parse → serialize → parse gives the same value,
/// in compact, pretty and sorted form.
@main
struct FuzzTarget {
    static func main() {
        Fuzzer.run { data, count in
            let bytes = Fuzzer.bytes(data, count)
            guard let value = try? JSON(parsing: bytes) else {
                Fuzzer.check((try? JSON(parsing: bytes, duplicateKeys: .reject)) == nil, "refusing repeats accepted a text")
                return 0
            }
            let compact = value.serialized()
            let reparsed = try? JSON(parsing: compact)
            Fuzzer.check(reparsed == value, "parse → serialize → parse changed \(String(decoding: compact, as: UTF8.self))")
            Fuzzer.check(reparsed?.serialized() == compact, "serializing twice gave other bytes")
            for options: JSON.WritingOptions in [.prettyPrinted, .sortedKeys] {
                let written = value.serialized(options: options)
                Fuzzer.check((try? JSON(parsing: written)) == value, "\(options.rawValue) output parses to another value")
            }
            return 0
        }
    }
}
