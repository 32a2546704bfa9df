import Foundation
import FuzzSupport
import HTTPTypes
import HammockJSON
import HammockProxy
import HammockServer

/// A recording's promise: a secret the app sent (a bearer token, a cookie, an API key, a password in a
/// JSON or form body, a token in the query) is written nowhere, however the backend echoes it back (in
/// its body as text or JSON, in a header, in a cookie it sets). The bytes choose a secret, where the
/// request carries it, and where and how the answers repeat it among noise; the configuration and the HAR
/// written from the recording must not hold it.
@main
struct FuzzTarget {
    /// Letters a secret is made of: what tokens are made of, and nothing JSON or a URL would escape, so
    /// that "not in the file" means "not anywhere in it".
    static let secretAlphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789-_.")
    /// What noise is made of: text around the secret in bodies and fields, `:`, `=`, `;`, `&`, quotes and
    /// spaces among it, so that the secret meets the separators redaction splits on.
    static let noiseAlphabet = Array("ab xyz:=;&,\"'/?{}[]0123456789-_.")

    static func main() {
        Fuzzer.run { data, count in
            FuzzTarget.record(Fuzzer.bytes(data, count))
            return 0
        }
    }

    static func record(_ bytes: [UInt8]) {
        var reader = ByteReader(bytes)
        let secret = "S" + String((0..<(8 + reader.choose(9))).map { _ in reader.pick(secretAlphabet) })
        func noise() -> String { String((0..<reader.choose(12)).map { _ in reader.pick(noiseAlphabet) }) }
        let recording = ProxyRecording()
        for exchange in 0..<(1 + reader.choose(3)) {
            // Where the app sends it (at least one place a recording redacts).
            var fields = HTTPFields()
            var query = "q=\(exchange)"
            var body: [UInt8] = []
            var contentType: String?
            let places = max(reader.byte() & 0x3F, 1)
            if places & 1 != 0 {
                // A Basic credential's password is searched for decoded: the backend may echo it plainly.
                let scheme = reader.pick(["Bearer ", "Token ", "", "Basic "])
                fields[.authorization] =
                    scheme == "Basic " ? scheme + Data("ada:\(secret)".utf8).base64EncodedString() : scheme + secret
            }
            if places & 2 != 0 { fields[.cookie] = "theme=dark; sid=\(secret)" }
            if places & 4 != 0 { fields[HTTPField.Name("X-Api-Key")!] = secret }
            if places & 8 != 0 { query += "&access_token=\(secret)" }
            if places & 16 != 0 {
                contentType = "application/json"
                body = Array(#"{"user": "ada", "password": "\#(secret)", "note": "\#(noise())"}"#.utf8)
            } else if places & 32 != 0 {
                contentType = "application/x-www-form-urlencoded"
                body = Array("user=ada&client_secret=\(secret)&n=\(exchange)".utf8)
            }
            if let contentType { fields[.contentType] = contentType }
            let method: HTTPRequest.Method = body.isEmpty ? .get : .post
            let request = MockRequest(method, "/items/\(exchange)?\(query)", headerFields: fields, body: body)
            // How the backend repeats it.
            var answerFields = HTTPFields()
            let echoes = reader.byte()
            if echoes & 1 != 0 { answerFields[HTTPField.Name("X-Echo")!] = noise() + secret + noise() }
            if echoes & 2 != 0 { answerFields[.setCookie] = "sid=\(secret); Path=/; HttpOnly" }
            if echoes & 4 != 0 { answerFields[.location] = "/items/\(exchange)?seen=\(secret)" }
            var answer: [UInt8]
            switch reader.choose(4) {
            case 0:
                answerFields[.contentType] = "application/json"
                answer = Array(
                    #"{"headers": {"Authorization": "Bearer \#(secret)"}, "echo": "\#(noise())\#(secret)\#(noise())"}"#.utf8)
            case 1:
                answerFields[.contentType] = "application/json"
                answer = Array(#"[{"id": \#(exchange), "token": "\#(secret)", "name": "\#(noise())"}]"#.utf8)
            case 2:
                answerFields[.contentType] = "text/plain"
                answer = Array("you sent \(noise())\(secret)\(noise())".utf8)
            default:
                answerFields[.contentType] = "text/html"
                answer = Array("<p>\(secret)</p>".utf8)
            }
            if echoes & 8 != 0 { answer = Array("\(secret)".utf8) }
            recording.add(request: request, status: .ok, fields: answerFields, body: answer)
        }
        for inferring in [false, true] {
            let written = recording.configuration(inferringResources: inferring).configuration.serializedString()
            Fuzzer.check(!written.contains(secret), "the secret \(secret) is in the configuration written: \(written)")
        }
        let archive = recording.archive().archive.serializedString()
        Fuzzer.check(!archive.contains(secret), "the secret \(secret) is in the HAR written: \(archive)")
    }
}
