import HTTPTypes
import NIOCore
import NIOHTTP1
import Testing

@testable import HammockHTTPServer

@Suite("The status line")
struct StatusLineTests {
    func line(_ status: HTTPResponse.Status, version: HTTPVersion = .http1_1) -> String {
        var buffer = ByteBuffer()
        HTTP1Wire.writeStatusLine(version: version, status: status, into: &buffer)
        return String(buffer: buffer)
    }

    @Test("A status made from its code alone is written with its standard phrase; a phrase of its own is kept")
    func phrases() {
        #expect(line(HTTPResponse.Status(code: 202)) == "HTTP/1.1 202 Accepted\r\n")
        #expect(line(HTTPResponse.Status(code: 418), version: .http1_0) == "HTTP/1.0 418 I'm a teapot\r\n")
        #expect(line(HTTPResponse.Status(code: 402, reasonPhrase: "Card Declined")) == "HTTP/1.1 402 Card Declined\r\n")
        #expect(line(.ok) == "HTTP/1.1 200 OK\r\n")
        // A code no RFC names keeps an empty phrase, which HTTP/1.1 allows.
        #expect(line(HTTPResponse.Status(code: 299)) == "HTTP/1.1 299 \r\n")
    }
}
