public import Foundation

/// A value that can stand in a path segment, a query item, a form field or a header.
///
/// `String`, integers, `Double`, `Float`, `Bool` (`true`/`false`), `Date` (ISO 8601), `UUID`, `URL`,
/// and optionals (`nil` is omitted) and arrays (the key repeats) of them conform. Enums are sent by raw
/// value even without it; declaring the conformance costs nothing:
///
/// ```swift
/// enum Sort: String, ParameterValue { case created, updated }
/// ```
public protocol ParameterValue {
    /// The textual values, before percent-encoding: none to omit, several to repeat the key.
    var parameterStrings: [String] { get }
}

extension ParameterValue where Self: RawRepresentable, RawValue: ParameterValue {
    /// The raw value's text.
    public var parameterStrings: [String] { rawValue.parameterStrings }
}

extension String: ParameterValue {
    /// The string itself.
    public var parameterStrings: [String] { [self] }
}

extension Substring: ParameterValue {
    /// The substring itself.
    public var parameterStrings: [String] { [String(self)] }
}

extension Bool: ParameterValue {
    /// `true` or `false`.
    public var parameterStrings: [String] { [self ? "true" : "false"] }
}

extension Int: ParameterValue {
    /// Decimal digits.
    public var parameterStrings: [String] { [String(self)] }
}

extension Int64: ParameterValue {
    /// Decimal digits.
    public var parameterStrings: [String] { [String(self)] }
}

extension Int32: ParameterValue {
    /// Decimal digits.
    public var parameterStrings: [String] { [String(self)] }
}

extension UInt: ParameterValue {
    /// Decimal digits.
    public var parameterStrings: [String] { [String(self)] }
}

extension UInt64: ParameterValue {
    /// Decimal digits.
    public var parameterStrings: [String] { [String(self)] }
}

extension Double: ParameterValue {
    /// The shortest text that reads back as the same value.
    public var parameterStrings: [String] { [description] }
}

extension Float: ParameterValue {
    /// The shortest text that reads back as the same value.
    public var parameterStrings: [String] { [description] }
}

extension Date: ParameterValue {
    /// ISO 8601 in UTC, with fractional seconds when there are any.
    public var parameterStrings: [String] {
        let fractional = timeIntervalSince1970.truncatingRemainder(dividingBy: 1) != 0
        return [formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: fractional))]
    }
}

extension UUID: ParameterValue {
    /// The canonical upper-case form.
    public var parameterStrings: [String] { [uuidString] }
}

extension URL: ParameterValue {
    /// The absolute string.
    public var parameterStrings: [String] { [absoluteString] }
}

extension Optional: ParameterValue where Wrapped: ParameterValue {
    /// Nothing for `nil`.
    public var parameterStrings: [String] { self?.parameterStrings ?? [] }
}

extension Array: ParameterValue where Element: ParameterValue {
    /// One value per element, so the key repeats.
    public var parameterStrings: [String] { flatMap(\.parameterStrings) }
}
