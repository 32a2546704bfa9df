import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Log lines written to a file descriptor by a thread of their own, so that logging a request never
/// waits for the terminal, a pipe or a disk.
///
/// Appending a line copies its bytes into a buffer under a lock: no system call, no formatting of the
/// time more than once a second. The writer thread takes the whole buffer at once, writes it, then
/// waits a few milliseconds for more, so that a busy server makes about a hundred `write` calls a
/// second whatever its request rate. If the destination cannot keep up and the buffer reaches
/// `capacity`, new lines are dropped rather than making requests wait, and the writer says how many
/// it dropped once it has caught up.
///
/// ```swift
/// let output = BufferedLogOutput.standardOutput
/// let logger = Logger(label: "hammock") { BufferedLogHandler(label: $0, output: output) }
/// // ...
/// await output.flush()   // before exiting: every line appended so far is written
/// ```
public final class BufferedLogOutput: Sendable {
    /// Standard output, written by one writer thread for the whole process.
    public static let standardOutput = BufferedLogOutput(fileDescriptor: 1)
    /// Standard error, written by one writer thread for the whole process.
    public static let standardError = BufferedLogOutput(fileDescriptor: 2)

    struct State: ~Copyable {
        var buffer: [UInt8] = []
        /// Bytes appended since the start, and bytes the writer has handed to the system.
        var appended = 0
        var written = 0
        var dropped = 0
        var writerIsWaiting = false
        /// Closed: lines appended from now on are ignored, and the writer ends once it has caught up.
        var isClosed = false
        var closes: [CheckedContinuation<Void, Never>] = []
        var writerHasEnded = false
        var flushes: [(upTo: Int, continuation: CheckedContinuation<Void, Never>)] = []
        /// The local time of `second`, formatted once for every line logged in that second.
        var second = 0
        var timestamp: [UInt8] = []
    }

    let fileDescriptor: Int32
    let capacity: Int
    let interval: Duration
    let state = Mutex(State())
    /// Signalled when a line arrives while the writer waits for one.
    let wake = DispatchSemaphore(value: 0)

    /// Starts a writer thread for `fileDescriptor` (which stays open: it is not this object's).
    /// - Parameters:
    ///   - capacity: The most bytes held waiting to be written; lines beyond it are dropped and counted.
    ///   - interval: How long the writer gathers lines after each write.
    public init(fileDescriptor: Int32, capacity: Int = 4 << 20, interval: Duration = .milliseconds(10)) {
        self.fileDescriptor = fileDescriptor
        self.capacity = capacity
        self.interval = interval
        let thread = Thread { [self] in self.runWriter() }
        thread.name = "hammock-log-writer"
        thread.start()
    }

    /// Appends one line: the current local time, `text`, a newline. Never waits for the destination.
    public func appendLine(_ text: String) {
        appendLine { $0.append(contentsOf: text.utf8) }
    }

    /// Appends one line: the current local time, a space, what `write` appends, a newline. `write` runs
    /// under the output's lock and must not block.
    func appendLine(_ write: (inout [UInt8]) -> Void) {
        let now = time(nil)
        let wakeWriter = state.withLock { state -> Bool in
            guard !state.isClosed else { return false }
            if state.second != now || state.timestamp.isEmpty {
                state.second = now
                state.timestamp = Self.format(now)
            }
            let start = state.buffer.count
            state.buffer.append(contentsOf: state.timestamp)
            state.buffer.append(UInt8(ascii: " "))
            write(&state.buffer)
            state.buffer.append(UInt8(ascii: "\n"))
            guard state.buffer.count <= capacity else {
                state.buffer.removeSubrange(start...)
                state.dropped += 1
                return false
            }
            state.appended += state.buffer.count - start
            guard state.writerIsWaiting else { return false }
            state.writerIsWaiting = false
            return true
        }
        if wakeWriter { wake.signal() }
    }

    /// Returns once every line appended before the call has been written (or dropped).
    public func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (done, wakeWriter) = state.withLock { state -> (Bool, Bool) in
                guard state.written < state.appended else { return (true, false) }
                state.flushes.append((state.appended, continuation))
                let waiting = state.writerIsWaiting
                state.writerIsWaiting = false
                return (false, waiting)
            }
            if done { continuation.resume() }
            if wakeWriter { wake.signal() }
        }
    }

    /// Writes what is left, ends the writer thread and returns; lines appended later are ignored. The
    /// file descriptor stays open.
    public func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (ended, wakeWriter) = state.withLock { state -> (Bool, Bool) in
                state.isClosed = true
                guard !state.writerHasEnded else { return (true, false) }
                state.closes.append(continuation)
                let waiting = state.writerIsWaiting
                state.writerIsWaiting = false
                return (false, waiting)
            }
            if ended { continuation.resume() }
            if wakeWriter { wake.signal() }
        }
    }

    /// What the writer does next.
    enum Step {
        case write([UInt8], dropped: Int)
        case wait
        case end([CheckedContinuation<Void, Never>])
    }

    /// The writer thread: take everything, write it, pause, repeat; wait when there is nothing.
    private func runWriter() {
        while true {
            let step = state.withLock { state -> Step in
                guard state.buffer.isEmpty && state.dropped == 0 else {
                    let chunk = state.buffer
                    // The next batch is likely about as large: one allocation instead of a growing series.
                    state.buffer = []
                    state.buffer.reserveCapacity(chunk.count)
                    defer { state.dropped = 0 }
                    return .write(chunk, dropped: state.dropped)
                }
                guard !state.isClosed else {
                    state.writerHasEnded = true
                    defer { state.closes = [] }
                    return .end(state.closes)
                }
                state.writerIsWaiting = true
                return .wait
            }
            switch step {
            case .wait:
                wake.wait()
            case .end(let closes):
                for continuation in closes { continuation.resume() }
                return
            case .write(let chunk, let dropped):
                writeAll(chunk)
                if dropped > 0 {
                    writeAll(Array("hammock: \(dropped) log lines dropped: the output did not keep up\n".utf8))
                }
                let finished = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    state.written += chunk.count
                    let done = state.flushes.filter { $0.upTo <= state.written }.map(\.continuation)
                    state.flushes.removeAll { $0.upTo <= state.written }
                    return done
                }
                for continuation in finished { continuation.resume() }
                let (seconds, attoseconds) = interval.components
                Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
            }
        }
    }

    /// Writes all of `bytes`, retrying after interruptions; gives up on other errors (a closed pipe).
    private func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                let result = write(fileDescriptor, base + offset, raw.count - offset)
                if result > 0 {
                    offset += result
                } else if result < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    /// `2026-11-24T04:22:42+0000`, the local time as swift-log's `StreamLogHandler` prints it.
    static func format(_ second: Int) -> [UInt8] {
        var seconds = time_t(second)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return Array("<unknown>".utf8) }
        var buffer = [Int8](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return buffer.prefix(count).map { UInt8(bitPattern: $0) }
    }
}
