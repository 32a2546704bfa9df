/// A way for an exchange to fail below HTTP: what a broken network, a crashed server or a proxy gone
/// wrong does to a client. A fault's ``Fault/Effect/connection(_:)`` effect.
///
/// | Kind | The route runs | What the client gets |
/// |---|---|---|
/// | ``drop`` | yes | the connection closed (FIN) without a byte of the answer: a write that happened, its answer lost |
/// | ``empty`` | no | the connection closed (FIN) without a byte, the request never served |
/// | ``reset`` | no | a TCP reset (RST): "connection reset by peer" |
/// | ``timeout`` | no | nothing, the connection open, until the client gives up or the server stops |
/// | ``truncate`` | yes | the status line, the header fields and half the body, then the connection closed |
/// | ``malformed`` | no | bytes that are not HTTP, then the connection closed |
///
/// In process, ``MockServer/exchange(_:timeout:)`` throws ``ConnectionFaultError`` for each (a timeout once the
/// caller's task is cancelled or the server stops), as a client over a socket sees an error, not an answer.
public enum ConnectionFault: String, Sendable, Hashable, CaseIterable {
    case drop
    case empty
    case reset
    case timeout
    case truncate
    case malformed

    /// Whether the route runs before the fault (its write happens; the answer is lost or cut).
    public var runsRoute: Bool { self == .drop || self == .truncate }

    /// What ``malformed`` sends: a line that no HTTP client reads as a status line, and bytes no text has.
    package static let malformedBytes: [UInt8] =
        Array("HAMMOCK-FAULT this is not HTTP\r\n".utf8) + [0x00, 0xFF, 0xFE, 0x0D, 0x0A, 0x0D, 0x0A]
}

/// A bandwidth in bytes per second, as a fault's ``Fault/Effect/bandwidth(_:)`` effect throttles a body.
public enum Bandwidth {
    /// The presets a mobile developer knows, in bytes per second: the downlink rates of the profiles of
    /// Apple's Network Link Conditioner (Edge 240 kbit/s, 3G 780 kbit/s, LTE 50 Mbit/s). Latency is not
    /// part of a preset: add it with `--latency` or a delay fault.
    public static let presets: [(name: String, bytesPerSecond: Int)] = [
        ("edge", 30_000), ("3g", 97_500), ("lte", 6_250_000),
    ]

    /// The smallest and largest bandwidth a fault takes: 1 byte per second to 10 GB per second.
    public static let range = 1...10_000_000_000

    /// The bytes per second a preset's name stands for, ignoring case.
    public static func preset(named name: String) -> Int? {
        presets.first { $0.name == name.lowercased() }?.bytesPerSecond
    }

    /// The preset's name for a rate, if it is one; else the number.
    static func describe(_ bytesPerSecond: Int) -> String {
        presets.first { $0.bytesPerSecond == bytesPerSecond }?.name ?? String(bytesPerSecond)
    }
}

/// The failure an in-process exchange meets where a client over a socket would meet a network error.
public struct ConnectionFaultError: Error, Sendable, CustomStringConvertible {
    /// What happened to the connection.
    public var fault: ConnectionFault
    /// For ``ConnectionFault/truncate``: the answer as far as it arrived (half its body).
    public var partialResponse: MockResponse?

    public init(_ fault: ConnectionFault, partialResponse: MockResponse? = nil) {
        self.fault = fault
        self.partialResponse = partialResponse
    }

    public var description: String {
        switch fault {
        case .drop, .empty: "the server closed the connection without an answer (\(fault.rawValue))"
        case .reset: "the connection was reset by the server"
        case .timeout: "the server accepted the request and never answered"
        case .truncate: "the server closed the connection in the middle of the body"
        case .malformed: "the server answered bytes that are not HTTP"
        }
    }
}
