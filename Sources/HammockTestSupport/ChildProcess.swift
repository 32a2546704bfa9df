import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program a test runs, started with `posix_spawn` directly, not with Foundation's `Process`.
///
/// Why not `Process`: on Linux, `Process.run()` lists `/proc/self/fd` to find the descriptors to close in
/// the child and copies each entry's name as 256 bytes, past the end of the last one; when the process
/// has many descriptors open (1,378 at the moment of the crash) that read crosses into an unmapped page
/// and the whole test process dies with SIGSEGV in `memcpy` (two CI runs in about ten, in
/// `ThrowawayPostgres.start()` and `runToEnd`). swift-corelibs-foundation fixes it after Swift 6.3.1.
///
/// What the child gets: its standard streams as asked (the null device, a pipe, a file), the
/// descriptors `0…2` and no others (the rest are closed in the child, so a pipe of another test is
/// never held open by it), default signal handlers and an empty signal mask (a test process may block
/// or ignore SIGTERM, SIGINT, SIGPIPE, and a child inherits both), and `directory` as its working
/// directory. Every descriptor this side keeps is close-on-exec, for the same reason. The child's
/// environment names this process in `HAMMOCK_PARENT_PID`, so that a `hammock serve` it starts stops when
/// this process ends, even by a crash.
///
/// ```swift
/// let child = try ChildProcess("/usr/bin/env", ["python3", "-V"], output: .pipe, errors: .sameAsOutput)
/// let text = child.output?.readToEnd()
/// let status = await child.termination().status
/// ```
public final class ChildProcess: Sendable {
    /// Where the child's standard input comes from.
    public enum Input: Sendable {
        case nullDevice
        /// A pipe whose write end is ``ChildProcess/input``.
        case pipe
    }

    /// Where the child's standard output (or error) goes.
    public enum Output: Sendable {
        case nullDevice
        /// A pipe whose read end is ``ChildProcess/output`` (or ``ChildProcess/errors``).
        case pipe
        /// A file, made or emptied first.
        case file(String)
        /// Standard error only: wherever standard output goes.
        case sameAsOutput
    }

    /// How the child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)

        /// The exit code, or 128 plus the signal's number (as a shell reports it).
        public var status: Int32 {
            switch self {
            case .exited(let code): code
            case .signaled(let signal): 128 + signal
            }
        }

        public var description: String {
            switch self {
            case .exited(let code): "exited \(code)"
            case .signaled(let signal): "killed by signal \(signal)"
            }
        }
    }

    /// The program could not be started.
    public struct SpawnError: Error, CustomStringConvertible {
        public var executable: String
        public var step: String
        public var code: Int32
        public var description: String { "cannot start \(executable): \(step) failed (\(String(cString: strerror(code))))" }
    }

    public let processIdentifier: Int32
    /// The write end of the child's standard input, when it is a pipe.
    public let input: PipeEnd?
    /// The read end of the child's standard output, when it is a pipe.
    public let output: PipeEnd?
    /// The read end of the child's standard error, when it is a pipe of its own.
    public let errors: PipeEnd?
    /// Shared with the thread that waits for the child (which must not keep this object alive: dropping
    /// it kills the child).
    private let life = Life()

    private final class Life: Sendable {
        let state = Mutex(State.running(waiting: []))
    }

    private enum State {
        case running(waiting: [CheckedContinuation<Termination, Never>])
        case ended(Termination)
    }

    /// Starts `executable` (a path) with `arguments`; `environment` replaces this process's when given,
    /// `adding` adds to (or overrides in) it.
    public init(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        adding extra: [String: String] = [:], directory: String? = nil, input: Input = .nullDevice,
        output: Output = .nullDevice, errors: Output = .nullDevice
    ) throws {
        var environment = environment ?? ProcessInfo.processInfo.environment
        // `hammock serve` stops once this process is gone (a crashed test run leaves no server behind);
        // other programs ignore it.
        environment["HAMMOCK_PARENT_PID"] = String(getpid())
        environment.merge(extra) { _, new in new }
        let failure = { (step: String, code: Int32) in SpawnError(executable: executable, step: step, code: code) }

        // Pipes first: the ends this side keeps, and the ends the child gets as 0, 1, 2.
        var keep: [Int32] = []
        var give: [Int32] = []
        defer { for descriptor in give { close(descriptor) } }
        func pipePair() throws -> (read: Int32, write: Int32) {
            var ends: [Int32] = [-1, -1]
            guard Self.closeOnExecPipe(&ends) == 0 else {
                for descriptor in keep { close(descriptor) }
                throw failure("pipe", errno)
            }
            return (ends[0], ends[1])
        }
        var inputEnd: Int32?
        var outputEnd: Int32?
        var errorsEnd: Int32?
        var childInput: Int32?
        var childOutput: Int32?
        var childErrors: Int32?
        if case .pipe = input {
            let pair = try pipePair()
            (inputEnd, childInput) = (pair.write, pair.read)
            keep.append(pair.write)
            give.append(pair.read)
        }
        if case .pipe = output {
            let pair = try pipePair()
            (outputEnd, childOutput) = (pair.read, pair.write)
            keep.append(pair.read)
            give.append(pair.write)
        }
        if case .pipe = errors {
            let pair = try pipePair()
            (errorsEnd, childErrors) = (pair.read, pair.write)
            keep.append(pair.read)
            give.append(pair.write)
        }

        var actions = Self.FileActions()
        var attributes = Self.SpawnAttributes()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        if let childInput {
            posix_spawn_file_actions_adddup2(&actions, childInput, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        for (target, destination, end) in [(Int32(1), output, childOutput), (Int32(2), errors, childErrors)] {
            switch destination {
            case .pipe: if let end { posix_spawn_file_actions_adddup2(&actions, end, target) }
            case .nullDevice: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .file(let path): posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .sameAsOutput: posix_spawn_file_actions_adddup2(&actions, 1, target)
            }
        }
        Self.closeTheRest(&actions, &attributes)
        if let directory {
            let code = Self.changeDirectory(&actions, directory)
            guard code == 0 else {
                for descriptor in keep { close(descriptor) }
                throw failure("chdir to \(directory)", code)
            }
        }
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        sigfillset(&signals)
        posix_spawnattr_setsigdefault(&attributes, &signals)
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        #if canImport(Darwin)
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #endif
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard code == 0 else {
            for descriptor in keep { close(descriptor) }
            throw failure("posix_spawn", code)
        }
        processIdentifier = pid
        self.input = inputEnd.map(PipeEnd.init)
        self.output = outputEnd.map(PipeEnd.init)
        self.errors = errorsEnd.map(PipeEnd.init)
        // One thread per child waits for it (a blocking wait, never on the cooperative pool).
        let life = self.life
        Thread.detachNewThread { [pid] in Self.reap(pid, into: life) }
    }

    /// Waits for the child to end.
    public func termination() async -> Termination {
        await withCheckedContinuation { continuation in
            let ended = life.state.withLock { state -> Termination? in
                switch state {
                case .running(var waiting):
                    waiting.append(continuation)
                    state = .running(waiting: waiting)
                    return nil
                case .ended(let termination):
                    return termination
                }
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }

    /// Whether the child has not ended yet.
    public var isRunning: Bool {
        life.state.withLock { if case .running = $0 { true } else { false } }
    }

    /// Sends `signal` to the child, unless it has ended. The child is reaped under the same lock (see
    /// ``reap(_:into:)``), so the process identifier is still the child's when the signal is sent: never
    /// a process that reused it.
    public func send(_ signal: Int32) {
        life.state.withLock { state in
            if case .running = state { kill(processIdentifier, signal) }
        }
    }

    /// SIGINT, as Ctrl-C in a terminal.
    public func interrupt() { send(SIGINT) }

    /// SIGTERM.
    public func terminate() { send(SIGTERM) }

    /// Waits (with `WNOWAIT`, so the child stays a zombie and its identifier stays taken), then records
    /// the end and reaps it under the lock ``send(_:)`` holds.
    private static func reap(_ pid: Int32, into life: Life) {
        var information = siginfo_t()
        while waitid(P_PID, id_t(pid), &information, WEXITED | WNOWAIT) != 0 {
            guard errno == EINTR else { break }
        }
        let (termination, waiting) = life.state.withLock { state in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let termination = Self.termination(fromWaitStatus: status)
            let waiting: [CheckedContinuation<Termination, Never>]
            if case .running(let list) = state { waiting = list } else { waiting = [] }
            state = .ended(termination)
            return (termination, waiting)
        }
        for continuation in waiting { continuation.resume(returning: termination) }
    }

    /// `WIFEXITED`/`WEXITSTATUS`/`WTERMSIG` (macros Swift does not import): the low seven bits are the
    /// signal (0 for a normal exit), the next eight the exit code.
    static func termination(fromWaitStatus status: Int32) -> Termination {
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }

    deinit {
        if isRunning { send(SIGKILL) }
    }
}

extension ChildProcess {
    #if canImport(Darwin)
    typealias FileActions = posix_spawn_file_actions_t?
    typealias SpawnAttributes = posix_spawnattr_t?
    #else
    typealias FileActions = posix_spawn_file_actions_t
    typealias SpawnAttributes = posix_spawnattr_t
    #endif

    /// A pipe whose both ends are close-on-exec from the start: `pipe2` on Linux (looked up by name, as
    /// below: Swift imports it only under `_GNU_SOURCE`). Darwin has no `pipe2`: there (and without
    /// it) the ends are marked a moment after, which a spawn on another thread could catch; this type's
    /// own spawns close every descriptor above 2 anyway.
    static func closeOnExecPipe(_ ends: inout [Int32]) -> Int32 {
        #if os(Linux)
        if let function = gnuFunction("pipe2") {
            // Proof of the cast: glibc's unistd.h declares it as `int pipe2(int __pipedes[2], int __flags)`,
            // and `ends` holds two.
            typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
            return unsafeBitCast(function, to: Pipe2.self)(&ends, O_CLOEXEC)
        }
        #endif
        guard pipe(&ends) == 0 else { return -1 }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return 0
    }

    /// Closes every descriptor above 2 in the child: Darwin's `POSIX_SPAWN_CLOEXEC_DEFAULT` flag does it;
    /// glibc (2.34 on) has `posix_spawn_file_actions_addclosefrom_np`, which Swift does not import (it is
    /// declared only under `_GNU_SOURCE`), so it is looked up by name. Without it (an older glibc),
    /// descriptors marked close-on-exec are still closed, which all of this side's are.
    static func closeTheRest(_ actions: inout FileActions, _ attributes: inout SpawnAttributes) {
        #if os(Linux)
        guard let function = gnuFunction("posix_spawn_file_actions_addclosefrom_np") else { return }
        // Proof of the cast: glibc's spawn.h declares it as
        // `int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *, int __from)`.
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        _ = unsafeBitCast(function, to: AddCloseFrom.self)(&actions, 3)
        #endif
    }

    /// Makes the child start in `directory`: `posix_spawn_file_actions_addchdir_np` (glibc 2.29 on,
    /// looked up by name as above; Darwin declares it).
    static func changeDirectory(_ actions: inout FileActions, _ directory: String) -> Int32 {
        #if os(Linux)
        guard let function = gnuFunction("posix_spawn_file_actions_addchdir_np") else { return ENOSYS }
        // Proof of the cast: glibc's spawn.h declares it as
        // `int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *, const char *)`.
        typealias AddChangeDirectory =
            @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
        return unsafeBitCast(function, to: AddChangeDirectory.self)(&actions, directory)
        #else
        return posix_spawn_file_actions_addchdir_np(&actions, directory)
        #endif
    }

    #if os(Linux)
    /// A function of the C library by name (`dlopen(nil)` is the program's global scope, libc in it).
    private static func gnuFunction(_ name: String) -> UnsafeMutableRawPointer? {
        guard let program = dlopen(nil, RTLD_NOW) else { return nil }
        return dlsym(program, name)
    }
    #endif
}

/// One end of a pipe to a child, this side's. Reads block: call them from a thread of their own, never
/// from the cooperative pool.
public final class PipeEnd: Sendable {
    private let descriptor: Mutex<Int32?>

    init(_ descriptor: Int32) { self.descriptor = Mutex(descriptor) }

    /// The bytes there, waiting for some; empty at the end (or after ``close()``). Retries on `EINTR`
    /// (a signal such as another child's SIGCHLD interrupts a blocked read).
    public func readAvailable(upTo count: Int = 64 << 10) -> [UInt8] {
        guard let descriptor = descriptor.withLock({ $0 }) else { return [] }
        var buffer = [UInt8](repeating: 0, count: count)
        while true {
            let read = buffer.withUnsafeMutableBytes { Glue.read(descriptor, $0.baseAddress, $0.count) }
            if read >= 0 { return Array(buffer[0..<read]) }
            if errno != EINTR { return [] }
        }
    }

    /// Everything until the end, then closes this end.
    public func readToEnd() -> [UInt8] {
        var all: [UInt8] = []
        while true {
            let chunk = readAvailable()
            if chunk.isEmpty { break }
            all += chunk
        }
        close()
        return all
    }

    /// Writes all of `bytes` (a closed end, or a child that closed its end, is an error).
    public func write(_ bytes: [UInt8]) throws {
        guard let descriptor = descriptor.withLock({ $0 }) else { throw POSIXError(.EBADF) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glue.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            offset += written
        }
    }

    /// Closes this end (again is nothing). Only after the last read: a read in flight on another thread
    /// would otherwise read a descriptor the process may have reused.
    public func close() {
        if let descriptor = descriptor.withLock({ value -> Int32? in
            defer { value = nil }
            return value
        }) {
            _ = Glue.close(descriptor)
        }
    }

    deinit { close() }
}

/// The C library's calls under names that do not collide with members.
private enum Glue {
    static func read(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(descriptor, buffer, count)
        #else
        Darwin.read(descriptor, buffer, count)
        #endif
    }

    static func write(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(descriptor, buffer, count)
        #else
        Darwin.write(descriptor, buffer, count)
        #endif
    }

    static func close(_ descriptor: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.close(descriptor)
        #else
        Darwin.close(descriptor)
        #endif
    }
}
