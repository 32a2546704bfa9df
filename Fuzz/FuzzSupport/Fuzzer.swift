import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// libFuzzer's driver, linked in by `-sanitize=fuzzer`: it parses the command line, then calls
/// `callback` with one input at a time, on the calling thread.
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The small harness every fuzz target shares.
///
/// ```swift
/// @main struct FuzzJSON {
///     static func main() {
///         Fuzzer.run { data, count in
///             let bytes = Fuzzer.bytes(data, count)
///             ...
///             return 0
///         }
///     }
/// }
/// ```
/// A target checks its invariants with ``check(_:_:)``, which aborts with a message: libFuzzer then
/// saves the input that broke it.
public enum Fuzzer {
    /// What libFuzzer calls for each input; it may not capture anything (it is a C function).
    public typealias Callback = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32

    /// Hands the process to libFuzzer, with the process's own arguments (`-max_total_time=60 CORPUS`…).
    public static func run(_ callback: Callback) -> Never {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
    }

    /// The input as an array.
    public static func bytes(_ data: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
        guard let data, count > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: count))
    }

    /// Stops the run with `message` when an invariant does not hold.
    public static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        guard !condition else { return }
        writeToStandardError("invariant broken: \(message())\n")
        abort()
    }

    /// Runs async work to its end and returns its result. The fuzzer calls targets on the main thread,
    /// which is not one of the concurrency pool's: waiting there blocks no task.
    public static func wait<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox<T>()
        Task {
            result.value = await body()
            done.signal()
        }
        done.wait()
        guard let value = result.value else { fatalError("the task ended without a result") }
        return value
    }
}

/// The result of ``Fuzzer/wait(_:)``'s task.
///
/// `@unchecked Sendable`: `value` is written once by the task before it signals the semaphore, and
/// read only after `wait()` returns, so the semaphore orders the write before the read.
private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}

/// Writes to descriptor 2 directly: the message must be out before `abort()`.
private func writeToStandardError(_ text: String) {
    var text = text
    text.withUTF8 { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
}
