import HammockJSON
import HammockSchema
import HammockStore
import HammockWire

/// SplitMix64: a small, fast generator whose whole state is one number, so a seed repeats a run.
package struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

/// Makes plausible records for a resource: values by rule, else by the field's type and name.
struct RecordMaker {
    var random: SeededRandom
    /// The rules' patterns, read once for all the records made.
    var patterns: [String: TextPattern] = [:]

    /// A record for `schema` (without a generated key), the `number`th made for it (from 1).
    /// `parentKeys` are the keys of each parent resource, for foreign keys.
    mutating func record(
        for schema: ResourceSchema, rules: [String: DataGeneration.FieldRule], number: Int, parentKeys: [String: [JSON]],
        keyMaker: KeyMaker? = nil
    ) -> JSONObject {
        var record = JSONObject(minimumCapacity: schema.columns.count)
        // One person behind the name, email and username of a record, so they agree.
        let person = (first: pick(Words.firstNames), last: pick(Words.lastNames))
        for column in schema.columns {
            if column.name == schema.key.name && schema.isKeyGenerated { continue }
            let rule = rules[column.name] ?? DataGeneration.FieldRule()
            if let choices = rule.choices, !choices.isEmpty {
                record[column.name] = pick(choices)
            } else if let foreignKey = schema.foreignKeys.first(where: { $0.name == column.name }) {
                let keys = parentKeys[foreignKey.parent] ?? []
                record[column.name] = keys.isEmpty ? .null : pick(keys)
            } else if column.name == schema.key.name, column.type == .integer {
                record[column.name] = .integer(number)
            } else if column.name == schema.key.name, let keyMaker {
                record[column.name] = .string(keyMaker.make(using: &random))
            } else if column.type == .string, let source = rule.pattern,
                let pattern = patterns[source] ?? (try? TextPattern(source))
            {
                // Checked when the generation was read; a pattern that cannot be made falls to the kind.
                patterns[source] = pattern
                record[column.name] = .string(pattern.make(using: &random))
            } else {
                record[column.name] = value(
                    of: column.type, field: column.name, resource: schema.name, rule: rule, number: number, person: person)
            }
        }
        return record
    }

    mutating func pick<Element>(_ elements: [Element]) -> Element {
        elements[Int.random(in: 0..<elements.count, using: &random)]
    }

    mutating func value(
        of type: FieldType, field: String, resource: String, rule: DataGeneration.FieldRule, number: Int,
        person: (first: String, last: String)
    ) -> JSON {
        switch type {
        case .string:
            let kind = rule.kind ?? Self.kind(ofField: field, resource: resource)
            return .string(text(kind, number: number, person: person))
        case .integer:
            let range = Self.integerRange(of: field)
            let low = rule.minimum?.intValue ?? range.lowerBound
            let high = max(low, rule.maximum?.intValue ?? (rule.minimum == nil ? range.upperBound : low.saturatingAdd(100)))
            return .integer(Int.random(in: low...high, using: &random))
        case .float:
            let (range, places) = Self.floatRange(of: field)
            let low = rule.minimum?.doubleValue ?? range.lowerBound
            let high = max(low, rule.maximum?.doubleValue ?? (rule.minimum == nil ? range.upperBound : low + 100))
            let scale = Double(places == 0 ? 1 : (1...places).reduce(1) { total, _ in total * 10 })
            // Weighted ends instead of `Double.random(in: low...high)`, which traps when `high - low`
            // overflows (a rule from -1e308 to 1e308); each product here stays finite.
            let unit = Double.random(in: 0..<1, using: &random)
            let value = min(max(low * (1 - unit) + high * unit, low), high)
            let rounded = (value * scale).rounded() / scale
            return .double(rounded.isFinite ? rounded : value)
        case .boolean:
            return .bool(Bool.random(using: &random))
        case .date:
            var (defaultRange, withTime) = Self.dateRange(of: field)
            // A bound written with a time (`2020-01-01T00:00:00Z`) asks for times; one without, for days.
            if let bound = (rule.minimum ?? rule.maximum)?.stringValue, bound.utf8.count >= 10 { withTime = bound.contains("T") }
            let low = rule.minimum?.stringValue.flatMap(CivilDate.days(from:)) ?? defaultRange.lowerBound
            let high = max(low, rule.maximum?.stringValue.flatMap(CivilDate.days(from:)) ?? defaultRange.upperBound)
            let day = Int.random(in: low...high, using: &random)
            guard withTime else { return .string(CivilDate.text(ofDay: day)) }
            let second = Int.random(in: 0..<86_400, using: &random)
            return .string(CivilDate.text(ofDay: day, second: second))
        case .blob, .json:
            return .null
        }
    }

    mutating func text(_ kind: DataGeneration.TextKind, number: Int, person: (first: String, last: String)) -> String {
        let (first, last) = person
        switch kind {
        case .fullName: return "\(first) \(last)"
        case .firstName: return first
        case .lastName: return last
        case .email: return "\(first.lowercased()).\(last.lowercased())\(number)@example.com"
        case .username: return "\(first.lowercased())_\(last.lowercased())\(number)"
        case .phone: return "+1 555 \(String(Int.random(in: 100...9999, using: &random)))"
        case .city: return pick(Words.cities)
        case .country: return pick(Words.countries)
        case .street: return "\(Int.random(in: 1...250, using: &random)) \(pick(Words.streets)) \(pick(Words.streetKinds))"
        case .company: return "\(Self.capitalized(pick(Words.words))) \(pick(Words.companyKinds))"
        case .url: return "https://example.com/\(pick(Words.words))-\(pick(Words.words))"
        case .imageURL: return "https://example.com/images/\(number).png"
        case .color: return pick(Words.colors)
        case .word: return pick(Words.words)
        case .title: return "\(Self.capitalized(pick(Words.words))) \(Self.capitalized(pick(Words.words)))"
        case .sentence: return sentence()
        case .paragraph: return [sentence(), sentence(), sentence()].joined(separator: " ")
        case .slug: return "\(pick(Words.words))-\(pick(Words.words))-\(number)"
        case .uuid: return KeyMaker.uuid(using: &random)
        }
    }

    mutating func sentence() -> String {
        let words = (0..<Int.random(in: 6...12, using: &random)).map { _ in pick(Words.words) }
        return Self.capitalized(words.joined(separator: " ")) + "."
    }

    static func capitalized(_ word: String) -> String { word.prefix(1).uppercased() + word.dropFirst() }

    // MARK: Guesses from a field's name

    /// The field's name in lowercase without `_` and `-`: `created_at` and `createdAt` read alike.
    static func plain(_ field: String) -> String { String(field.lowercased().filter { $0 != "_" && $0 != "-" }) }

    static func kind(ofField field: String, resource: String) -> DataGeneration.TextKind {
        let name = plain(field)
        let rules: [([String], DataGeneration.TextKind)] = [
            (["email"], .email), (["username", "login", "handle"], .username), (["firstname", "givenname"], .firstName),
            (["lastname", "surname", "familyname"], .lastName), (["phone", "mobile"], .phone), (["city", "town"], .city),
            (["country"], .country), (["street", "address"], .street), (["company", "employer", "organization"], .company),
            (["avatar", "image", "photo", "picture", "thumbnail", "logo"], .imageURL), (["url", "website", "homepage"], .url),
            (["color", "colour"], .color), (["slug"], .slug), (["uuid", "guid"], .uuid),
            (["body", "content", "bio", "about"], .paragraph),
            (["description", "summary", "text", "comment", "notes", "message"], .sentence),
            (["title", "subject", "headline"], .title),
        ]
        for (fragments, kind) in rules where fragments.contains(where: name.contains) { return kind }
        if name == "name" || name == "fullname" || name == "displayname" {
            return Words.personResources.contains(plain(resource)) ? .fullName : .title
        }
        return name.hasSuffix("name") ? .title : .word
    }

    static func integerRange(of field: String) -> ClosedRange<Int> {
        let name = plain(field)
        if name == "age" || field.hasSuffix("Age") || field.hasSuffix("_age") { return 18...90 }
        if name.contains("year") { return 1970...2025 }
        if name.contains("rating") || name.contains("stars") { return 1...5 }
        if ["price", "amount", "cost", "total", "salary", "balance"].contains(where: name.contains) { return 1...1000 }
        if ["quantity", "count", "number", "kids", "children"].contains(where: name.contains) { return 0...5 }
        if ["minutes", "duration"].contains(where: name.contains) { return 1...120 }
        return 0...100
    }

    /// A range and the decimal places kept.
    static func floatRange(of field: String) -> (ClosedRange<Double>, Int) {
        let name = plain(field)
        if ["price", "amount", "cost", "total", "salary", "balance"].contains(where: name.contains) { return (1...500, 2) }
        if name == "lat" || name.contains("latitude") { return (-90...90, 5) }
        if name == "lng" || name == "lon" || name.contains("longitude") { return (-180...180, 5) }
        if name.contains("rating") { return (1...5, 1) }
        if name.contains("percent") || name.contains("ratio") { return (0...100, 1) }
        if name.contains("weight") { return (0.5...120, 1) }
        if name.contains("height") { return (1.5...2.0, 2) }
        return (0...1000, 1)
    }

    /// Days since 1970-01-01, and whether the value has a time of day (`createdAt`, `updated_at`,
    /// `timestamp`).
    static func dateRange(of field: String) -> (ClosedRange<Int>, Bool) {
        let name = plain(field)
        let recent = CivilDate.days(year: 2020, month: 1, day: 1)...CivilDate.days(year: 2025, month: 12, day: 31)
        if name.contains("birth") || name == "dob" {
            return (CivilDate.days(year: 1950, month: 1, day: 1)...CivilDate.days(year: 2005, month: 12, day: 31), false)
        }
        if field.hasSuffix("At") || field.hasSuffix("_at") || name.contains("time") {
            return (recent, true)
        }
        return (CivilDate.days(year: 2015, month: 1, day: 1)...CivilDate.days(year: 2025, month: 12, day: 31), false)
    }
}

/// Dates of generated records as days since 1970-01-01, on the calendar arithmetic of ``HTTPDate``.
enum CivilDate {
    static func days(year: Int, month: Int, day: Int) -> Int { HTTPDate.days(fromCivil: year, month, day) }

    static func civil(fromDay day: Int) -> (year: Int, month: Int, day: Int) { HTTPDate.civil(fromDays: day) }

    /// The day of a `YYYY-MM-DD` text (anything may follow it); nil if it does not start with a real date.
    static func days(from text: String) -> Int? {
        let parts = text.prefix(10).split(separator: "-")
        guard text.utf8.count >= 10, parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]),
            let day = Int(parts[2]), (1...12).contains(month), (1...HTTPDate.daysIn(month: month, year: year)).contains(day)
        else { return nil }
        return days(year: year, month: month, day: day)
    }

    /// `YYYY-MM-DD`, or with `second` (of the day) `YYYY-MM-DDTHH:MM:SSZ`.
    static func text(ofDay day: Int, second: Int? = nil) -> String {
        let (year, month, dayOfMonth) = civil(fromDay: day)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let date = "\(year)-\(two(month))-\(two(dayOfMonth))"
        guard let second else { return date }
        return "\(date)T\(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60))Z"
    }
}
