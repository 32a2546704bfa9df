import SwiftSyntax

/// Generates `<Protocol>Mock`: a stand-in conforming to the protocol whose methods answer from closures
/// (`MockMethod`, in HammockClient) and record their calls, for tests of code that takes the protocol.
struct MockGenerator {
    let name: String
    let functions: [FunctionDeclSyntax]
    let access: String

    /// One method of the mock.
    struct Method {
        let function: FunctionDeclSyntax
        /// The property of `Methods` that holds its answer.
        var property: String
        /// `person(id:)`.
        let fullName: String
        /// The internal names and types of its parameters.
        let parameters: [(name: String, type: String)]
        /// Generic methods (or ones with `some` parameters) cannot hold one typed answer.
        let isGeneric: Bool
    }

    func generate() -> String {
        var methods = functions.map(Self.method)
        // Overloads share a base name: their properties add the labels (`search_q`, `search_tag`).
        let counts = Dictionary(grouping: methods, by: \.property).mapValues(\.count)
        for index in methods.indices where counts[methods[index].property, default: 0] > 1 {
            let labels = methods[index].function.signature.parameterClause.parameters.map { $0.firstName.text.trimmingBackticks }
            methods[index].property += labels.isEmpty ? "_" : "_" + labels.joined(separator: "_")
        }
        var properties: [String] = []
        var implementations: [String] = []
        for method in methods {
            var signature = method.function.signature.trimmed
            signature.leadingTrivia = []
            let generics = method.function.genericParameterClause?.trimmedDescription ?? ""
            let whereClause = method.function.genericWhereClause.map { " " + $0.trimmedDescription } ?? ""
            let header = "\(access)func \(method.function.name.text)\(generics)\(signature.trimmedDescription)\(whereClause)"
            if method.isGeneric {
                implementations.append(
                    """
                        \(header) {
                            throw UnansweredMockCall(method: \(literal(method.fullName + " (a generic method, which a mock cannot answer)")))
                        }
                    """)
                continue
            }
            let arguments: String
            let argumentType: String
            switch method.parameters.count {
            case 0:
                (arguments, argumentType) = ("()", "Void")
            case 1:
                (arguments, argumentType) = (method.parameters[0].name, method.parameters[0].type)
            default:
                arguments = "(" + method.parameters.map { "\($0.name): \($0.name)" }.joined(separator: ", ") + ")"
                argumentType = "(" + method.parameters.map { "\($0.name): \($0.type)" }.joined(separator: ", ") + ")"
            }
            let result = method.function.signature.returnClause?.type.trimmedDescription ?? "Void"
            properties.append(
                """
                        /// `\(method.fullName)`.
                        \(access)let \(method.property) = MockMethod<\(argumentType), \(result)>(\(literal(method.fullName)))
                """)
            implementations.append(
                """
                    \(header) {
                        try await self.on.\(method.property).call(\(arguments))
                    }
                """)
        }
        return """
            /// A stand-in for `\(name)` that `@API` generated: set each method's answer on `on`, and read
            /// the calls it received there (`mock.on.method.returns(value)`, `mock.on.method.calls`).
            \(access)final class \(name)Mock: \(name), Sendable {
                /// Each method's answer and calls.
                \(access)let on = Methods()

                /// A mock with no answers set: a call throws `UnansweredMockCall` until its answer is.
                \(access)init() {}

            \(implementations.joined(separator: "\n\n"))

                /// The answers and calls of `\(name)Mock`'s methods.
                \(access)struct Methods: Sendable {
            \(properties.joined(separator: "\n\n"))
                }
            }
            """
    }

    static func method(_ function: FunctionDeclSyntax) -> Method {
        let parameters = function.signature.parameterClause.parameters
        let labels = parameters.map { ($0.firstName.text.trimmingBackticks) + ":" }.joined()
        let fullName = "\(function.name.text.trimmingBackticks)(\(labels))"
        var isGeneric = function.genericParameterClause != nil
        let types: [(name: String, type: String)] = parameters.map { parameter in
            let name = (parameter.secondName ?? parameter.firstName).text
            var type = parameter.type.trimmedDescription
            if type.hasPrefix("some ") || type.contains("some ") { isGeneric = true }
            if parameter.ellipsis != nil { type = "[\(type)]" }
            if type.hasPrefix("inout ") { isGeneric = true }
            return (name, type)
        }
        return Method(
            function: function, property: function.name.text, fullName: fullName, parameters: types, isGeneric: isGeneric)
    }
}
