/// A pattern read for ``TextPattern/Purpose/matching``, compiled to an automaton and run over a text by
/// keeping every state the text can be in at once (Thompson's construction, as RE2 and Go search): the
/// time is the text's length times the program's, whatever either holds. A backtracking engine (ICU's,
/// Swift's `Regex`) takes exponential time on `^(a+)+$` against forty `a`s and a `b`; the pattern comes
/// from a third party's document and the text from any client, so neither may choose the cost.
package struct TextMatcher: Sendable {
    /// One step of the program.
    enum Instruction: Sendable, Hashable {
        /// Takes one scalar in the set (an index into ``sets``).
        case scalar(Int)
        /// Takes exactly this scalar.
        case literal(UInt32)
        /// Goes on at both places.
        case split(Int, Int)
        case jump(Int)
        case assert(TextPattern.Assertion)
        case match
    }

    /// The most instructions a program may have: a counted repetition is written out once per count,
    /// so `[a-z]{1,64}` takes 128 and real patterns stay under a thousand. A pattern past this is not
    /// tested (the schema says why); 20,000 states times a 1 MB string would be 20 billion steps.
    package static let largestProgram = 20_000

    let program: [Instruction]
    let sets: [ScalarSet]
    /// The pattern as written.
    package let source: String
    /// How many states the automaton has.
    package var size: Int { program.count }

    /// Compiles `pattern`, which must have been read for matching.
    /// - Throws: ``TextPatternError`` when the program would be larger than ``largestProgram``.
    package init(_ pattern: TextPattern) throws(TextPatternError) {
        var compiler = Compiler()
        guard compiler.emit(pattern.root), compiler.program.count < Self.largestProgram else {
            throw TextPatternError(
                pattern: pattern.source, offset: 0,
                reason: "its repetitions make an automaton of more than \(Self.largestProgram) states")
        }
        compiler.program.append(.match)
        program = compiler.program
        sets = compiler.sets
        source = pattern.source
    }

    /// Reads and compiles `source` for matching.
    package init(_ source: String) throws(TextPatternError) {
        try self.init(TextPattern(source, for: .matching))
    }

    /// Whether the pattern matches anywhere in `text` (JSON Schema's `pattern` is a search, not a whole
    /// match: anchor it with `^…$` for that).
    package func matches(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        var current = ThreadList(capacity: program.count)
        var next = ThreadList(capacity: program.count)
        for position in 0...scalars.count {
            // A search: a new thread starts at every position.
            if add(0, at: position, in: scalars, to: &current) { return true }
            guard position < scalars.count else { break }
            let scalar = scalars[position].value
            next.clear()
            for pc in current.members {
                let taken: Bool
                switch program[pc] {
                case .scalar(let set): taken = sets[set].contains(scalar)
                case .literal(let wanted): taken = wanted == scalar
                default: taken = false
                }
                if taken, add(pc + 1, at: position + 1, in: scalars, to: &next) { return true }
            }
            swap(&current, &next)
        }
        return false
    }

    /// Adds the thread at `pc` and every state it reaches without taking a scalar; `true` when one of
    /// them is the match.
    func add(_ start: Int, at position: Int, in scalars: [Unicode.Scalar], to list: inout ThreadList) -> Bool {
        var stack = [start]
        while let pc = stack.popLast() {
            guard list.insert(pc) else { continue }
            switch program[pc] {
            case .match:
                return true
            case .jump(let target):
                stack.append(target)
            case .split(let first, let second):
                stack.append(second)
                stack.append(first)
            case .assert(let assertion):
                if Self.holds(assertion, at: position, in: scalars) { stack.append(pc + 1) }
            case .scalar, .literal:
                continue
            }
        }
        return false
    }

    static func holds(_ assertion: TextPattern.Assertion, at position: Int, in scalars: [Unicode.Scalar]) -> Bool {
        switch assertion {
        case .start: return position == 0
        case .end: return position == scalars.count
        case .wordBoundary, .notWordBoundary:
            let before = position > 0 && ScalarSet.word.contains(scalars[position - 1].value)
            let after = position < scalars.count && ScalarSet.word.contains(scalars[position].value)
            return (before != after) == (assertion == .wordBoundary)
        }
    }

    /// The states a text can be in after a prefix: a sparse set (members in order of insertion, a
    /// generation per state), cleared in constant time.
    struct ThreadList {
        var members: [Int] = []
        var seen: [UInt32]
        var generation: UInt32 = 1

        init(capacity: Int) {
            seen = Array(repeating: 0, count: capacity)
            members.reserveCapacity(capacity)
        }

        mutating func insert(_ pc: Int) -> Bool {
            guard seen[pc] != generation else { return false }
            seen[pc] = generation
            members.append(pc)
            return true
        }

        mutating func clear() {
            members.removeAll(keepingCapacity: true)
            generation &+= 1
            if generation == 0 {
                for index in seen.indices { seen[index] = 0 }
                generation = 1
            }
        }
    }

    /// Writes a node's program; stops (returning `false`) once it is too large.
    struct Compiler {
        var program: [Instruction] = []
        var sets: [ScalarSet] = []
        var setIndex: [ScalarSet: Int] = [:]

        mutating func emit(_ node: TextPattern.Node) -> Bool {
            guard program.count < TextMatcher.largestProgram else { return false }
            switch node {
            case .text(let scalars):
                for scalar in scalars { program.append(.literal(scalar.value)) }
            case .assertion(let assertion):
                program.append(.assert(assertion))
            case .oneOf(let set):
                let index = setIndex[set] ?? sets.count
                if index == sets.count {
                    sets.append(set)
                    setIndex[set] = index
                }
                program.append(.scalar(index))
            case .sequence(let nodes):
                for node in nodes where !emit(node) { return false }
            case .choice(let nodes):
                // split L1, next; L1: first; jump end; next: split L2, … ; last
                var jumps: [Int] = []
                for (offset, node) in nodes.enumerated() {
                    if offset == nodes.count - 1 {
                        guard emit(node) else { return false }
                    } else {
                        let split = program.count
                        program.append(.split(split + 1, 0))
                        guard emit(node) else { return false }
                        jumps.append(program.count)
                        program.append(.jump(0))
                        program[split] = .split(split + 1, program.count)
                    }
                }
                for jump in jumps { program[jump] = .jump(program.count) }
            case .repetition(let node, let minimum, let maximum):
                for _ in 0..<minimum where !emit(node) { return false }
                if let maximum {
                    // Each optional copy: split into it or past all of them.
                    var splits: [Int] = []
                    for _ in minimum..<max(minimum, maximum) {
                        splits.append(program.count)
                        program.append(.split(program.count + 1, 0))
                        guard emit(node) else { return false }
                    }
                    for split in splits { program[split] = .split(split + 1, program.count) }
                } else {
                    // loop: split body, end; body; jump loop. A body that can match no text cannot loop
                    // forever: a state is added once per position.
                    let loop = program.count
                    program.append(.split(loop + 1, 0))
                    guard emit(node) else { return false }
                    program.append(.jump(loop))
                    program[loop] = .split(loop + 1, program.count)
                }
            }
            return program.count < TextMatcher.largestProgram
        }
    }
}
