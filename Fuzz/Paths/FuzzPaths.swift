import FuzzSupport
import HammockWire

/// Percent-encoding, the one implementation that client, server and resources share: never a crash,
/// decoding undoes encoding for paths and forms, and anything encoded reads back whole.
@main
struct FuzzTarget {
    static func main() {
        Fuzzer.run { data, count in
            let bytes = Fuzzer.bytes(data, count)
            let text = String(decoding: bytes, as: UTF8.self)
            if let decoded = PercentEncoding.decode(Substring(text)) {
                let encoded = PercentEncoding.encode(decoded)
                Fuzzer.check(PercentEncoding.decode(Substring(encoded)) == decoded, "path segment '\(text)' does not round-trip")
                Fuzzer.check(
                    encoded.utf8.allSatisfy { PercentEncoding.isUnreserved($0) || $0 == UInt8(ascii: "%") },
                    "'\(encoded)' holds a reserved character")
            }
            if let component = PercentEncoding.decodeForm(bytes[...]) {
                let encoded = Array(PercentEncoding.encodeForm(component).utf8)
                Fuzzer.check(
                    PercentEncoding.decodeForm(encoded[...]) == component, "form component '\(component)' does not round-trip")
            }
            Fuzzer.check(PercentEncoding.decode(Substring(PercentEncoding.encode(text))) == text, "'\(text)' is not read back")
            Fuzzer.check(
                PercentEncoding.decodeForm(Array(PercentEncoding.encodeForm(text).utf8)[...]) == text,
                "form '\(text)' is not read back")
            return 0
        }
    }
}
