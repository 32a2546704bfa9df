/// Enums (and other `RawRepresentable` values) are sent by their raw value, whether or not they
/// declare ``ParameterValue``. These overloads are disfavoured, so a type that does conform uses
/// its own ``ParameterValue/parameterStrings``.
extension RequestBuilder {
    @_disfavoredOverload
    public mutating func setPathValue<V: RawRepresentable>(_ value: V, for name: String) where V.RawValue: ParameterValue {
        setPathValue(value.rawValue, for: name)
    }

    @_disfavoredOverload
    public mutating func addQuery<V: RawRepresentable>(_ name: String, _ value: V?) where V.RawValue: ParameterValue {
        addQuery(name, value?.rawValue)
    }

    @_disfavoredOverload
    public mutating func addQuery<V: RawRepresentable>(_ name: String, _ values: [V]) where V.RawValue: ParameterValue {
        addQuery(name, values.map(\.rawValue))
    }

    @_disfavoredOverload
    public mutating func setHeader<V: RawRepresentable>(_ name: String, _ value: V?) where V.RawValue: ParameterValue {
        setHeader(name, value?.rawValue)
    }

    @_disfavoredOverload
    public mutating func addFormField<V: RawRepresentable>(_ name: String, _ value: V?) where V.RawValue: ParameterValue {
        addFormField(name, value?.rawValue)
    }

    @_disfavoredOverload
    public mutating func addFormField<V: RawRepresentable>(_ name: String, _ values: [V]) where V.RawValue: ParameterValue {
        addFormField(name, values.map(\.rawValue))
    }

    @_disfavoredOverload
    public mutating func addPart<V: RawRepresentable>(_ name: String, _ value: V?) where V.RawValue: ParameterValue {
        addPart(name, value?.rawValue)
    }
}
