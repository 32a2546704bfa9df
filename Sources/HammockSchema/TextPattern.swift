/// A regular expression read to make strings that match it: a key of the form an API document gives
/// (`^asst_[A-Za-z0-9]{24}$`), a made-up value that keeps a schema's `pattern`.
///
/// ```swift
/// let pattern = try TextPattern("^ord_[0-9a-f]{8}$")
/// var random = SystemRandomNumberGenerator()
/// pattern.make(using: &random)   // "ord_3fa90c1e"
/// ```
/// It reads what schemas and keys use: literals and escapes, `.`, classes (`[a-z0-9_-]`, `[^,]`,
/// `\d \w \s` and their negations, `[:alpha:]` and five more POSIX names), groups (capturing, `(?:…)`,
/// named), alternation, and the quantifiers `* + ? {n} {n,} {n,m}` (lazy or possessive alike). Anchors
/// and `\b` match no text, so they make none. What cannot be made without searching (lookaround,
/// backreferences, Unicode properties, inline flags) is refused with a ``TextPatternError``, as is a
/// pattern whose shortest match is longer than ``longestText``: a document from a third party must not
/// make the server build a megabyte per key.
///
/// Made strings use printable ASCII where the pattern leaves a choice (`.`, a negated class), so they
/// survive a URL, a header and a log line. An open repetition (`*`, `+`, `{n,}`) makes at most 16 more
/// than its minimum, and none once the text is ``longestText`` long.
///
/// Read ``Purpose/matching`` instead, the same pattern is a test of text (``matches(_:)``), as JSON
/// Schema's `pattern` is: anchors and `\b` keep their meaning, `.` and negations stand for every scalar,
/// and the search runs in time linear in the text (an automaton, not backtracking), so neither a
/// document's pattern nor a request's string can make it take long.
package struct TextPattern: Sendable, Hashable, CustomStringConvertible {
    /// The longest shortest-match a pattern may have, in characters: twice the bytes a key may take in a
    /// URL (`ResourceSchema.maximumKeyBytesInURL`), so every key pattern a URL can carry is accepted.
    package static let longestText = 4_096
    /// How deep groups may nest: real patterns nest two or three deep; the parser recurses once per level.
    package static let deepestNesting = 32
    /// The most characters of a pattern read: a longer one is no key or value format.
    package static let longestSource = 4_096
    /// How many more than its minimum an open repetition makes at most.
    static let openRepetitionSpread = 16

    /// What a pattern is read for.
    package enum Purpose: Sendable, Hashable {
        /// Making strings: anchors make nothing; `.` and negations choose from printable ASCII.
        case making
        /// Testing strings: anchors are kept; `.` and negations stand for every scalar.
        case matching
    }

    /// A test at a place in the text, which matches no text itself.
    enum Assertion: Sendable, Hashable {
        case start, end, wordBoundary, notWordBoundary
    }

    indirect enum Node: Sendable, Hashable {
        case text([Unicode.Scalar])
        /// Only when read for ``Purpose/matching``.
        case assertion(Assertion)
        case oneOf(ScalarSet)
        case sequence([Node])
        case choice([Node])
        case repetition(Node, minimum: Int, maximum: Int?)
    }

    /// The pattern as written.
    package let source: String
    /// What it was read for.
    package let purpose: Purpose
    let root: Node
    /// The length of the shortest text it matches.
    package let shortestLength: Int

    /// Reads a pattern.
    /// - Throws: ``TextPatternError`` naming the position and what could not be read.
    package init(_ source: String, for purpose: Purpose = .making) throws(TextPatternError) {
        self.source = source
        self.purpose = purpose
        let scalars = Array(source.unicodeScalars)
        guard scalars.count <= Self.longestSource else {
            throw TextPatternError(
                pattern: source, offset: Self.longestSource,
                reason: "longer than \(Self.longestSource) characters, which no key or value format needs")
        }
        var parser = Parser(scalars: scalars, source: source, purpose: purpose)
        let root = try parser.alternation(depth: 0)
        if parser.index < scalars.count {
            throw parser.error("an unmatched ')'")
        }
        let shortest = Self.shortestLength(of: root)
        guard shortest <= Self.longestText || purpose == .matching else {
            throw TextPatternError(
                pattern: source, offset: 0,
                reason: "its shortest match is longer than \(Self.longestText) characters")
        }
        self.root = root
        shortestLength = shortest
    }

    package var description: String { source }

    /// A string the pattern matches.
    package func make<R: RandomNumberGenerator>(using random: inout R) -> String {
        var output = String.UnicodeScalarView()
        var count = 0
        Self.make(root, into: &output, count: &count, using: &random)
        return String(output)
    }

    static func make<R: RandomNumberGenerator>(
        _ node: Node, into output: inout String.UnicodeScalarView, count: inout Int, using random: inout R
    ) {
        switch node {
        case .text(let scalars):
            output.append(contentsOf: scalars)
            count += scalars.count
        case .assertion:
            break
        case .oneOf(let set):
            output.append(set.pick(using: &random))
            count += 1
        case .sequence(let nodes):
            for node in nodes { make(node, into: &output, count: &count, using: &random) }
        case .choice(let nodes):
            make(nodes[Int.random(in: 0..<nodes.count, using: &random)], into: &output, count: &count, using: &random)
        case .repetition(let node, let minimum, let maximum):
            let ceiling = min(maximum ?? Int.max, minimum + openRepetitionSpread)
            let times = Int.random(in: minimum...max(minimum, ceiling), using: &random)
            for time in 0..<times {
                // Past its minimum, a repetition stops once the text is long enough: nested open
                // repetitions would otherwise multiply (17 per level).
                if time >= minimum && count >= longestText { break }
                make(node, into: &output, count: &count, using: &random)
            }
        }
    }

    /// The shortest text's length, saturating rather than overflowing (`(a{9999}){9999}` is refused,
    /// not a trap).
    static func shortestLength(of node: Node) -> Int {
        switch node {
        case .text(let scalars): return scalars.count
        case .assertion: return 0
        case .oneOf: return 1
        case .sequence(let nodes):
            return nodes.reduce(0) { total, node in
                let (sum, overflow) = total.addingReportingOverflow(shortestLength(of: node))
                return overflow ? Int.max : sum
            }
        case .choice(let nodes): return nodes.map(shortestLength(of:)).min() ?? 0
        case .repetition(let node, let minimum, _):
            let (product, overflow) = shortestLength(of: node).multipliedReportingOverflow(by: minimum)
            return overflow ? Int.max : product
        }
    }
}

/// A pattern ``TextPattern`` cannot make strings for, and why.
package struct TextPatternError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The pattern.
    package var pattern: String
    /// Where reading stopped, in Unicode scalars from the start.
    package var offset: Int
    /// What was wrong, in words.
    package var reason: String

    package var description: String {
        "the pattern '\(pattern.prefix(200))' cannot be used: \(reason) (at character \(offset))"
    }
}

/// A set of Unicode scalars as sorted, disjoint ranges: what a class (`[a-z_]`, `\d`) stands for.
struct ScalarSet: Sendable, Hashable {
    private(set) var ranges: [ClosedRange<UInt32>] = []

    static let digits = ScalarSet([0x30...0x39])
    static let word = ScalarSet([0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A])
    static let letters = ScalarSet([0x41...0x5A, 0x61...0x7A])
    static let alphanumerics = ScalarSet([0x30...0x39, 0x41...0x5A, 0x61...0x7A])
    static let space = ScalarSet([0x20...0x20])
    static let whitespace = ScalarSet([0x09...0x0D, 0x20...0x20])
    /// Where a negation takes its members when making text: printable ASCII.
    static let printable = ScalarSet([0x20...0x7E])
    /// Where a negation takes its members when matching: every scalar.
    static let everything = ScalarSet([0...0xD7FF, 0xE000...0x10FFFF])
    /// What `\s` matches in a JavaScript pattern, which JSON Schema's are.
    static let javaScriptSpace = ScalarSet([
        0x09...0x0D, 0x20...0x20, 0xA0...0xA0, 0x1680...0x1680, 0x2000...0x200A, 0x2028...0x2029, 0x202F...0x202F,
        0x205F...0x205F, 0x3000...0x3000, 0xFEFF...0xFEFF,
    ])

    /// Whether `scalar` is a member: a binary search of the ranges.
    func contains(_ scalar: UInt32) -> Bool {
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < scalar {
                low = middle + 1
            } else if ranges[middle].lowerBound > scalar {
                high = middle
            } else {
                return true
            }
        }
        return false
    }

    init(_ ranges: [ClosedRange<UInt32>] = []) {
        for range in ranges { insert(range) }
    }

    var isEmpty: Bool { ranges.isEmpty }

    mutating func insert(_ range: ClosedRange<UInt32>) {
        var merged = range
        var kept: [ClosedRange<UInt32>] = []
        for existing in ranges {
            if existing.upperBound &+ 1 < merged.lowerBound || merged.upperBound &+ 1 < existing.lowerBound {
                kept.append(existing)
            } else {
                merged = min(existing.lowerBound, merged.lowerBound)...max(existing.upperBound, merged.upperBound)
            }
        }
        kept.append(merged)
        ranges = kept.sorted { $0.lowerBound < $1.lowerBound }
    }

    mutating func formUnion(_ other: ScalarSet) {
        for range in other.ranges { insert(range) }
    }

    /// The members of `universe` not in this set.
    func complement(in universe: ScalarSet) -> ScalarSet {
        var result = ScalarSet()
        for range in universe.ranges {
            // In 64 bits, so that a range ending at the last scalar has a successor.
            var start = UInt64(range.lowerBound)
            let end = UInt64(range.upperBound)
            for excluded in ranges where UInt64(excluded.upperBound) >= start && UInt64(excluded.lowerBound) <= end {
                if UInt64(excluded.lowerBound) > start { result.insert(UInt32(start)...(excluded.lowerBound - 1)) }
                start = UInt64(excluded.upperBound) + 1
            }
            if start <= end { result.insert(UInt32(start)...UInt32(end)) }
        }
        return result
    }

    /// One member, each as likely; valid scalars only (surrogates are left out when the set is built).
    func pick<R: RandomNumberGenerator>(using random: inout R) -> Unicode.Scalar {
        let total = ranges.reduce(UInt64(0)) { $0 + UInt64($1.upperBound - $1.lowerBound) + 1 }
        var index = UInt64.random(in: 0..<max(total, 1), using: &random)
        for range in ranges {
            let size = UInt64(range.upperBound - range.lowerBound) + 1
            if index < size { return Unicode.Scalar(range.lowerBound + UInt32(index)) ?? "?" }
            index -= size
        }
        return "?"
    }
}

extension TextPattern {
    /// A recursive-descent reader over the pattern's scalars.
    struct Parser {
        let scalars: [Unicode.Scalar]
        let source: String
        let purpose: Purpose
        var index = 0

        /// What a negation takes its members from.
        var universe: ScalarSet { purpose == .matching ? .everything : .printable }
        var isMatching: Bool { purpose == .matching }

        func error(_ reason: String) -> TextPatternError {
            TextPatternError(pattern: source, offset: index, reason: reason)
        }

        var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

        mutating func alternation(depth: Int) throws(TextPatternError) -> Node {
            guard depth <= TextPattern.deepestNesting else {
                throw error("groups nested deeper than \(TextPattern.deepestNesting)")
            }
            var branches = [try sequence(depth: depth)]
            while current == "|" {
                index += 1
                branches.append(try sequence(depth: depth))
            }
            return branches.count == 1 ? branches[0] : .choice(branches)
        }

        mutating func sequence(depth: Int) throws(TextPatternError) -> Node {
            var nodes: [Node] = []
            while let scalar = current, scalar != "|", scalar != ")" {
                guard let atom = try atom(depth: depth) else {
                    // An anchor when making: its quantifier (`^{2}`) goes with it, as when matching, and
                    // is not read as the literal text `{2}`.
                    _ = try quantified(.text([]))
                    continue
                }
                if case .assertion = atom {
                    // A quantified assertion (`^*`) is as good as the assertion or nothing: no text.
                    _ = try quantified(.text([]))
                    nodes.append(atom)
                    continue
                }
                nodes.append(try quantified(atom))
            }
            // Adjacent literals become one run of text.
            var merged: [Node] = []
            for node in nodes {
                if case .text(let more) = node, case .text(let run)? = merged.last {
                    merged[merged.count - 1] = .text(run + more)
                } else {
                    merged.append(node)
                }
            }
            return merged.count == 1 ? merged[0] : .sequence(merged)
        }

        /// The next atom, or `nil` for an anchor (which matches no text).
        mutating func atom(depth: Int) throws(TextPatternError) -> Node? {
            guard let scalar = current else { throw error("the pattern ends early") }
            index += 1
            switch scalar {
            case "^", "$":
                return isMatching ? .assertion(scalar == "^" ? .start : .end) : nil
            case ".":
                // Any scalar but a line terminator, when matching.
                return .oneOf(
                    isMatching ? ScalarSet([0x0A...0x0A, 0x0D...0x0D, 0x2028...0x2029]).complement(in: universe) : .alphanumerics)
            case "[":
                return .oneOf(try characterClass())
            case "(":
                if current == "?" {
                    index += 1
                    switch current {
                    case ":":
                        index += 1
                    case "<" where index + 1 < scalars.count && scalars[index + 1] != "=" && scalars[index + 1] != "!",
                        "P", "'":
                        // A named group, `(?<name>`, `(?P<name>` or `(?'name'`: its name makes nothing.
                        if current == "P" { index += 1 }
                        let closing: Unicode.Scalar = current == "'" ? "'" : ">"
                        index += 1
                        while let next = current, next != closing { index += 1 }
                        guard current == closing else { throw error("a group name that does not end") }
                        index += 1
                    default:
                        throw error("lookaround and inline flags cannot be made without searching")
                    }
                }
                let inner = try alternation(depth: depth + 1)
                guard current == ")" else { throw error("a '(' without its ')'") }
                index += 1
                return inner
            case "*", "+", "?":
                throw error("'\(scalar)' repeats nothing")
            case "\\":
                return try escape(inClass: false)
            default:
                return .text([scalar])
            }
        }

        /// A quantifier after `atom`, if one follows.
        mutating func quantified(_ atom: Node) throws(TextPatternError) -> Node {
            var minimum = 1
            var maximum: Int? = 1
            switch current {
            case "*": (minimum, maximum) = (0, nil)
            case "+": (minimum, maximum) = (1, nil)
            case "?": (minimum, maximum) = (0, 1)
            case "{":
                guard let bounds = try braces() else { return atom }
                (minimum, maximum) = bounds
                index -= 1  // `braces` left the index after `}`; the common step below moves past it again
            default: return atom
            }
            index += 1
            if current == "?" || current == "+" { index += 1 }  // lazy or possessive: the same strings
            return .repetition(atom, minimum: minimum, maximum: maximum)
        }

        /// `{n}`, `{n,}` or `{n,m}` at the index; `nil` (nothing read) when the brace is a literal.
        mutating func braces() throws(TextPatternError) -> (Int, Int?)? {
            let start = index
            index += 1
            func number(_ parser: inout Parser) -> Int? {
                var value = 0
                var digits = 0
                while let scalar = parser.current, ("0"..."9").contains(scalar) {
                    // Past 100,000 the count only matters for being too long; it saturates there.
                    value = min(value * 10 + Int(scalar.value) - 0x30, 100_000)
                    digits += 1
                    parser.index += 1
                }
                return digits == 0 ? nil : value
            }
            guard let minimum = number(&self) else {
                index = start
                return nil
            }
            var maximum: Int? = minimum
            if current == "," {
                index += 1
                maximum = number(&self)
            }
            guard current == "}" else {
                index = start
                return nil
            }
            index += 1
            if let maximum, maximum < minimum {
                throw error("the repetition {\(minimum),\(maximum)} has its bounds the wrong way round")
            }
            return (minimum, maximum)
        }

        /// After `\`: a class escape, a control character, a code point, or the character itself.
        mutating func escape(inClass: Bool) throws(TextPatternError) -> Node? {
            guard let scalar = current else { throw error("a '\\' at the end") }
            index += 1
            switch scalar {
            case "d": return .oneOf(.digits)
            case "D": return .oneOf(isMatching ? ScalarSet.digits.complement(in: universe) : .letters)
            case "w": return .oneOf(.word)
            case "W": return .oneOf(ScalarSet.word.complement(in: universe))
            case "s": return .oneOf(isMatching ? .javaScriptSpace : .space)
            case "S": return .oneOf(isMatching ? ScalarSet.javaScriptSpace.complement(in: universe) : .alphanumerics)
            case "b" where !inClass, "B" where !inClass:
                return isMatching ? .assertion(scalar == "b" ? .wordBoundary : .notWordBoundary) : nil
            case "A", "z", "Z":
                return isMatching ? .assertion(scalar == "A" ? .start : .end) : nil
            case "G":
                if isMatching { throw error("'\\G' cannot be tested") }
                return nil
            case "b": return .text(["\u{08}"])
            case "n": return .text(["\n"])
            case "t": return .text(["\t"])
            case "r": return .text(["\r"])
            case "f": return .text(["\u{0C}"])
            case "v": return .text(["\u{0B}"])
            case "0": return .text(["\u{00}"])
            case "x", "u":
                return .text([try codePoint(digits: scalar == "x" ? 2 : 4)])
            case "1"..."9", "k":
                throw error("a backreference cannot be made without searching")
            case "p", "P", "X", "R", "h", "H", "N", "K", "Q", "E", "c":
                throw error("the escape '\\\(scalar)' is not supported")
            default:
                return .text([scalar])
            }
        }

        /// `\xhh`, `\uhhhh` or `\x{h…}`, `\u{h…}`.
        mutating func codePoint(digits: Int) throws(TextPatternError) -> Unicode.Scalar {
            var hex = ""
            if current == "{" {
                index += 1
                while let scalar = current, scalar != "}", hex.count < 8 {
                    hex.unicodeScalars.append(scalar)
                    index += 1
                }
                guard current == "}" else { throw error("a '\\x{' without its '}'") }
                index += 1
            } else {
                for _ in 0..<digits {
                    guard let scalar = current else { break }
                    hex.unicodeScalars.append(scalar)
                    index += 1
                }
            }
            guard let value = UInt32(hex, radix: 16), let code = Unicode.Scalar(value) else {
                throw error("'\(hex)' is not a code point")
            }
            return code
        }

        /// After `[`: the members up to the closing `]`.
        mutating func characterClass() throws(TextPatternError) -> ScalarSet {
            var set = ScalarSet()
            let negated = current == "^"
            if negated { index += 1 }
            var first = true
            while true {
                guard let scalar = current else { throw error("a '[' without its ']'") }
                if scalar == "]" && !first {
                    index += 1
                    break
                }
                first = false
                if scalar == "[" && index + 1 < scalars.count && scalars[index + 1] == ":" {
                    set.formUnion(try posixClass())
                    continue
                }
                index += 1
                var low: Unicode.Scalar
                if scalar == "\\" {
                    guard let node = try escape(inClass: true) else { continue }
                    switch node {
                    case .oneOf(let members):
                        set.formUnion(members)
                        continue
                    case .text(let text) where text.count == 1:
                        low = text[0]
                    default:
                        continue
                    }
                } else {
                    low = scalar
                }
                // A range `a-z`, unless the `-` is last (`[a-]`).
                if current == "-", index + 1 < scalars.count, scalars[index + 1] != "]" {
                    index += 1
                    guard var high = current else { throw error("a '[' without its ']'") }
                    index += 1
                    if high == "\\" {
                        guard case .text(let text)? = try escape(inClass: true), text.count == 1 else {
                            throw error("a range ends in a class")
                        }
                        high = text[0]
                    }
                    guard low.value <= high.value else {
                        throw error("the range \(low)-\(high) runs backwards")
                    }
                    Self.insert(low.value...high.value, into: &set)
                } else {
                    set.insert(low.value...low.value)
                }
            }
            let members = negated ? set.complement(in: universe) : set
            guard !members.isEmpty else { throw error("the class matches no character that can be made") }
            return members
        }

        /// A range without the surrogates, which are no scalars.
        static func insert(_ range: ClosedRange<UInt32>, into set: inout ScalarSet) {
            let surrogates: ClosedRange<UInt32> = 0xD800...0xDFFF
            guard range.overlaps(surrogates) else { return set.insert(range) }
            if range.lowerBound < surrogates.lowerBound { set.insert(range.lowerBound...(surrogates.lowerBound - 1)) }
            if range.upperBound > surrogates.upperBound { set.insert((surrogates.upperBound + 1)...range.upperBound) }
        }

        /// `[:alpha:]` and its kin inside a class.
        mutating func posixClass() throws(TextPatternError) -> ScalarSet {
            let start = index
            index += 2
            var name = ""
            while let scalar = current, scalar != ":" {
                name.unicodeScalars.append(scalar)
                index += 1
                if name.count > 10 { break }
            }
            guard current == ":", index + 1 < scalars.count, scalars[index + 1] == "]" else {
                index = start
                throw error("a '[:' class that does not end in ':]'")
            }
            index += 2
            switch name {
            case "alpha": return .letters
            case "digit": return .digits
            case "alnum": return .alphanumerics
            case "upper": return ScalarSet([0x41...0x5A])
            case "lower": return ScalarSet([0x61...0x7A])
            case "xdigit": return ScalarSet([0x30...0x39, 0x41...0x46, 0x61...0x66])
            case "space": return .whitespace
            default: throw error("the class [:\(name):] is not supported")
            }
        }
    }
}
