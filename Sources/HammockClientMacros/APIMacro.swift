import SwiftDiagnostics
import SwiftParser
public import SwiftSyntax
import SwiftSyntaxBuilder
public import SwiftSyntaxMacros

/// `@API`: generates `<Protocol>Client`, implementing each method by building a `RequestBuilder` and
/// sending it through a `RestClient`, and `<Protocol>Mock`, answering each from a closure.
public struct APIMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let api = declaration.as(ProtocolDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: APIDiagnostic.notAProtocol))
            return []
        }
        let isPublic = api.modifiers.contains { $0.name.tokenKind == .keyword(.public) }
        let access = isPublic ? "public " : ""
        var sharedHeaders: [(String, String)] = []
        var errorBody: String?
        for attribute in api.attributes.compactMap({ $0.as(AttributeSyntax.self) }) {
            switch attribute.name {
            case "Headers":
                guard let headers = Attributes.headers(attribute) else {
                    context.diagnose(Diagnostic(node: attribute, message: APIDiagnostic.badHeaders))
                    return []
                }
                sharedHeaders = headers
            case "ErrorBody":
                errorBody = Attributes.errorBodyType(attribute)
            default: break
            }
        }
        var methods: [String] = []
        var endpoints: [String] = []
        var functions: [FunctionDeclSyntax] = []
        var failed = false
        for member in api.memberBlock.members {
            guard let function = member.decl.as(FunctionDeclSyntax.self) else {
                if member.decl.is(AssociatedTypeDeclSyntax.self) || member.decl.is(TypeAliasDeclSyntax.self) { continue }
                context.diagnose(Diagnostic(node: member.decl, message: APIDiagnostic.unsupportedMember))
                failed = true
                continue
            }
            if let method = MethodGenerator(
                function: function, sharedHeaders: sharedHeaders, errorBody: errorBody, access: access
            )
            .generate(in: context) {
                methods.append(method.method)
                endpoints.append(method.endpoint)
                functions.append(function)
            } else {
                failed = true
            }
        }
        guard !failed else { return [] }
        let name = api.name.text
        let body = methods.joined(separator: "\n\n")
        return [
            """
            /// The client `@API` generated for `\(raw: name)`.
            \(raw: access)struct \(raw: name)Client: \(raw: name) {
                /// The client every request goes through.
                \(raw: access)let client: RestClient

                /// The request of each method, built but not sent: what a typed resource loads
                /// (`service.resource(client.endpoints.method(…))`).
                \(raw: access)let endpoints = Endpoints()

                /// A client sending requests through `client`.
                \(raw: access)init(client: RestClient) {
                    self.client = client
                }

            \(raw: body)

                /// Builds the request of each of `\(raw: name)`'s methods.
                \(raw: access)struct Endpoints: Sendable {
            \(raw: isPublic ? "        public init() {}\n\n" : "")\(raw: endpoints.joined(separator: "\n\n"))
                }
            }
            """,
            DeclSyntax(stringLiteral: MockGenerator(name: name, functions: functions, access: access).generate()),
        ]
    }
}

extension AttributeSyntax {
    /// The attribute's name without module qualification (`GET` for `@HammockClient.GET`).
    var name: String {
        let text = attributeName.trimmedDescription
        return text.split(separator: ".").last.map(String.init) ?? text
    }

    var labeledArguments: LabeledExprListSyntax? { arguments?.as(LabeledExprListSyntax.self) }
}

enum Attributes {
    static let verbs = ["GET": "get", "POST": "post", "PUT": "put", "PATCH": "patch", "DELETE": "delete", "HEAD": "head"]

    /// The value of a string literal argument, if it has no interpolation.
    static func string(_ expression: ExprSyntax?) -> String? {
        expression?.as(StringLiteralExprSyntax.self)?.representedLiteralValue
    }

    static func headers(_ attribute: AttributeSyntax) -> [(String, String)]? {
        guard let expression = attribute.labeledArguments?.first?.expression.as(DictionaryExprSyntax.self) else { return nil }
        guard case .elements(let elements) = expression.content else { return [] }
        var headers: [(String, String)] = []
        for element in elements {
            guard let key = string(element.key), let value = string(element.value) else { return nil }
            headers.append((key, value))
        }
        return headers
    }

    static func errorBodyType(_ attribute: AttributeSyntax) -> String? {
        guard let expression = attribute.labeledArguments?.first?.expression else { return nil }
        if let member = expression.as(MemberAccessExprSyntax.self), member.declName.baseName.text == "self",
            let base = member.base
        {
            return base.trimmedDescription
        }
        return expression.trimmedDescription
    }
}

/// Swift source for a string literal holding `value`.
func literal(_ value: String) -> String {
    var output = "\""
    for scalar in value.unicodeScalars {
        switch scalar {
        case "\\": output += "\\\\"
        case "\"": output += "\\\""
        case "\n": output += "\\n"
        case "\r": output += "\\r"
        case "\t": output += "\\t"
        case _ where scalar.value < 0x20: output += "\\u{\(String(scalar.value, radix: 16))}"
        default: output.unicodeScalars.append(scalar)
        }
    }
    return output + "\""
}
