/// A check of the Swift source ``SwiftClientSource`` makes, independent of how it was made: a small lexer
/// that accepts only what a generated client holds (line comments, identifiers, keywords, punctuation,
/// plain string literals, the client's own attributes) and path templates `@API` can read. `hammock
/// generate swift` runs it on its output and refuses to print a file that fails it; the generate fuzz
/// target asserts it on every input.
///
/// What it is for: names and paths come from a configuration or an OpenAPI document someone else wrote.
/// A path such as `/p")\n#error("pwned")` must stay inside its string literal, a name with a line break
/// inside its comment, and no `#` directive, interpolation or block comment may appear at all.
public enum SwiftSourceCheck {
    /// The attributes a generated client uses.
    static let attributes: Set<String> = ["API", "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "Body"]
    /// The attributes whose argument is a path template.
    static let verbs: Set<String> = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]

    /// What is wrong with `source`, one line each with its line number; empty when it passes.
    public static func problems(in source: String) -> [String] {
        var problems: [String] = []
        var depth = (braces: 0, parentheses: 0, brackets: 0)
        var pendingAttribute: String?
        for (index, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            func fail(_ message: String) { problems.append("line \(number): \(message)") }
            let scalars = Array(line.unicodeScalars)
            var position = 0
            while position < scalars.count {
                let scalar = scalars[position]
                switch scalar {
                case " ", "\t":
                    position += 1
                case "/" where position + 1 < scalars.count && scalars[position + 1] == "/":
                    // A line comment: to the end of the line, which it must not contain in another form.
                    if scalars[position...].contains(where: { $0 == "\r" || $0.value < 0x09 || (0x0B...0x1F).contains($0.value) })
                    {
                        fail("a comment holds a control character")
                    }
                    position = scalars.count
                case "/" where position + 1 < scalars.count && scalars[position + 1] == "*":
                    fail("a block comment")
                    position = scalars.count
                case "\"":
                    guard let (text, end) = stringLiteral(scalars, from: position, fail: fail) else {
                        position = scalars.count
                        continue
                    }
                    if let attribute = pendingAttribute, verbs.contains(attribute), let problem = templateProblem(text) {
                        fail("@\(attribute)'s path template \(problem)")
                    }
                    pendingAttribute = nil
                    position = end
                case "`":
                    guard let close = scalars[(position + 1)...].firstIndex(of: "`"),
                        isIdentifier(scalars[(position + 1)..<close])
                    else {
                        fail("a backticked name that is no identifier")
                        position = scalars.count
                        continue
                    }
                    position = close + 1
                case "@":
                    let start = position + 1
                    var end = start
                    while end < scalars.count, isIdentifierScalar(scalars[end]) { end += 1 }
                    let name = String(String.UnicodeScalarView(scalars[start..<end]))
                    if !attributes.contains(name) { fail("an attribute the client does not use: @\(name)") }
                    pendingAttribute = name
                    position = end
                case "#":
                    fail("a '#' in code (a directive or a macro)")
                    position = scalars.count
                case "{", "}", "(", ")", "[", "]":
                    switch scalar {
                    case "{": depth.braces += 1
                    case "}": depth.braces -= 1
                    case "(": depth.parentheses += 1
                    case ")": depth.parentheses -= 1
                    case "[": depth.brackets += 1
                    default: depth.brackets -= 1
                    }
                    if depth.braces < 0 || depth.parentheses < 0 || depth.brackets < 0 { fail("a closing '\(scalar)' too many") }
                    position += 1
                case ":", ",", ".", "?", "!", "=", "-", ">", "<", "&":
                    position += 1
                default:
                    if isIdentifierScalar(scalar) {
                        while position < scalars.count, isIdentifierScalar(scalars[position]) { position += 1 }
                    } else {
                        fail("a character generated code does not hold: U+\(String(scalar.value, radix: 16, uppercase: true))")
                        position = scalars.count
                    }
                }
            }
        }
        if depth.braces != 0 || depth.parentheses != 0 || depth.brackets != 0 { problems.append("brackets do not balance") }
        return problems
    }

    /// A plain string literal starting at `start` (its opening quote): its decoded text and the position
    /// after its closing quote; `nil` (after failing) for one that is not closed on its line, or holds an
    /// interpolation or an escape Swift does not know.
    static func stringLiteral(_ scalars: [Unicode.Scalar], from start: Int, fail: (String) -> Void) -> (String, Int)? {
        var text = ""
        var position = start + 1
        while position < scalars.count {
            let scalar = scalars[position]
            if scalar == "\"" { return (text, position + 1) }
            if scalar.value < 0x20 || scalar.value == 0x7F {
                fail("a control character inside a string literal")
                return nil
            }
            guard scalar == "\\" else {
                text.unicodeScalars.append(scalar)
                position += 1
                continue
            }
            guard position + 1 < scalars.count else { break }
            let escaped = scalars[position + 1]
            switch escaped {
            case "\\", "\"", "'": text.unicodeScalars.append(escaped)
            case "n": text += "\n"
            case "r": text += "\r"
            case "t": text += "\t"
            case "0": text += "\u{0}"
            case "u":
                guard position + 2 < scalars.count, scalars[position + 2] == "{",
                    let close = scalars[(position + 3)...].firstIndex(of: "}"),
                    let value = UInt32(String(String.UnicodeScalarView(scalars[(position + 3)..<close])), radix: 16),
                    let decoded = Unicode.Scalar(value)
                else {
                    fail("a \\u escape that is not one")
                    return nil
                }
                text.unicodeScalars.append(decoded)
                position = close + 1
                continue
            case "(":
                fail("an interpolation inside a string literal")
                return nil
            default:
                fail("an escape Swift does not know: \\\(escaped)")
                return nil
            }
            position += 2
        }
        fail("a string literal not closed on its line")
        return nil
    }

    /// Why `template` is no path template `@API` reads as a path with placeholders, or `nil`.
    static func templateProblem(_ template: String) -> String? {
        guard template.hasPrefix("/") else { return "does not start with '/'" }
        guard template.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            return "holds a space, a control or a non-ASCII character"
        }
        guard !template.contains(where: { "?#\"\\".contains($0) }) else { return "holds '?', '#', a quote or a backslash" }
        var rest = Substring(template)
        while let open = rest.firstIndex(where: { $0 == "{" || $0 == "}" }) {
            guard rest[open] == "{", let close = rest[open...].firstIndex(of: "}") else { return "has braces that do not pair" }
            let name = rest[rest.index(after: open)..<close]
            guard isIdentifier(ArraySlice(name.unicodeScalars)) else { return "has a placeholder that is no identifier" }
            rest = rest[rest.index(after: close)...]
        }
        return nil
    }

    static func isIdentifierScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_")
    }

    static func isIdentifier(_ scalars: ArraySlice<Unicode.Scalar>) -> Bool {
        guard let first = scalars.first, !("0"..."9").contains(first) else { return false }
        return scalars.allSatisfy(isIdentifierScalar)
    }
}
