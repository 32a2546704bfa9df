import Foundation
import HammockJSON
import HammockStore

/// Makes the value of a field the server fills when a create leaves it out (``MockResource/madeFields``):
/// the write's moment, its day, or a string of a key format.
struct MemberMaker: Sendable {
    enum Value: Sendable {
        case now, today
        case text(KeyMaker)
    }

    let field: String
    let type: FieldType
    let value: Value

    /// The makers of `resource`'s made fields, in field order.
    /// - Throws: ``SchemaError`` naming a field that is not declared, is the key, or whose type cannot
    ///   hold what is made; or a pattern that cannot be read.
    static func all(_ resource: MockResource) throws(SchemaError) -> [MemberMaker] {
        var makers: [MemberMaker] = []
        for name in resource.madeFields.keys.sorted() {
            guard let made = resource.madeFields[name] else { continue }
            guard let field = resource.field(named: name) else {
                throw SchemaError(
                    resource: resource.name, message: "its made field '\(name.prefix(100))' is not a declared field")
            }
            guard name != resource.primaryKey else {
                throw SchemaError(
                    resource: resource.name, message: "its key '\(name.prefix(100))' is made by a key format, not as a made field"
                )
            }
            let value: Value
            switch made {
            case .now:
                guard [.string, .date, .integer, .float].contains(field.type) else {
                    throw SchemaError(
                        resource: resource.name,
                        message:
                            "its made field '\(name.prefix(100))' is a \(field.type.rawValue): \"now\" fills a string, date, integer or float"
                    )
                }
                value = .now
            case .today:
                guard [.string, .date].contains(field.type) else {
                    throw SchemaError(
                        resource: resource.name,
                        message:
                            "its made field '\(name.prefix(100))' is a \(field.type.rawValue): \"today\" fills a string or date")
                }
                value = .today
            case .format(let format):
                guard field.type == .string else {
                    throw SchemaError(
                        resource: resource.name,
                        message: "its made field '\(name.prefix(100))' is a \(field.type.rawValue): a format makes strings")
                }
                value = .text(
                    try KeyMaker(format, resource: resource.name, what: "its made field '\(name.prefix(100))'", forKeys: false))
            }
            makers.append(MemberMaker(field: name, type: field.type, value: value))
        }
        return makers
    }

    /// The value for a record written at `date`.
    func make<R: RandomNumberGenerator>(at date: Date, using random: inout R) -> JSON {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let day = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        switch value {
        case .now:
            switch type {
            case .integer: return .integer(seconds)
            case .float: return .double(date.timeIntervalSince1970)
            default: return .string(CivilDate.text(ofDay: day, second: seconds - day * 86_400))
            }
        case .today: return .string(CivilDate.text(ofDay: day))
        case .text(let maker): return .string(maker.makeOnce(using: &random))
        }
    }
}

extension MockResource.MadeValue {
    /// As a configuration file writes it: `"now"`, `"today"`, `"uuid"` or `{"pattern": "^T-[0-9]{6}$"}`.
    package var configurationValue: JSON {
        switch self {
        case .now: "now"
        case .today: "today"
        case .format(let format): format.configurationValue
        }
    }

    /// The value a configuration file's entry names, or `nil` for one that names none.
    package init?(configurationValue value: JSON) {
        switch value {
        case "now": self = .now
        case "today": self = .today
        default:
            guard let format = MockResource.KeyFormat(configurationValue: value) else { return nil }
            self = .format(format)
        }
    }
}

extension MockResource.ListEnvelope {
    /// As a configuration file writes it: `{"items": "data", "total": "total", "members": {...}}`.
    package var configurationValue: JSON {
        var object: JSONObject = ["items": .string(items)]
        if let total { object["total"] = .string(total) }
        if let hasMore { object["hasMore"] = .string(hasMore) }
        if let nextCursor { object["nextCursor"] = .string(nextCursor) }
        if !members.isEmpty { object["members"] = .object(members) }
        return .object(object)
    }
}
