import HammockWire
import SwiftDiagnostics
import SwiftParser
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// Generates one method of the client, or diagnoses why it cannot.
struct MethodGenerator {
    let function: FunctionDeclSyntax
    let sharedHeaders: [(String, String)]
    let errorBody: String?
    let access: String

    struct Parameter {
        let syntax: FunctionParameterSyntax
        /// The name inside the method.
        let name: String
        /// The external label when there is one, else the name: the name on the wire.
        let wireName: String
        var isOptional: Bool {
            syntax.type.is(OptionalTypeSyntax.self) || syntax.type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self)
        }
    }

    /// The method's two halves: the function of `Endpoints` that builds its request, and the client's
    /// method that sends it.
    struct Generated {
        var endpoint: String
        var method: String
    }

    func generate(in context: some MacroExpansionContext) -> Generated? {
        let methodName = function.name.text
        var ok = true
        func diagnose(_ node: some SyntaxProtocol, _ message: APIDiagnostic, fixIts: [FixIt] = []) {
            context.diagnose(Diagnostic(node: node, message: message, fixIts: fixIts))
            ok = false
        }

        // The verb and the template.
        let attributes = function.attributes.compactMap { $0.as(AttributeSyntax.self) }
        let verbAttributes = attributes.filter { Attributes.verbs[$0.name] != nil }
        guard let verbAttribute = verbAttributes.first, let verb = Attributes.verbs[verbAttribute.name] else {
            diagnose(function.name, .missingVerb(method: methodName))
            return nil
        }
        if verbAttributes.count > 1 { diagnose(verbAttributes[1], .multipleVerbs(method: methodName)) }
        guard let templateExpression = verbAttribute.labeledArguments?.first?.expression,
            let template = Attributes.string(templateExpression)
        else {
            diagnose(verbAttribute, .templateNotLiteral)
            return nil
        }

        // async throws, with a fix-it.
        let effects = function.signature.effectSpecifiers
        if effects?.asyncSpecifier == nil || effects?.throwsClause == nil {
            var fixed = function.signature
            fixed.effectSpecifiers = FunctionEffectSpecifiersSyntax(
                asyncSpecifier: .keyword(.async, leadingTrivia: .space),
                throwsClause: ThrowsClauseSyntax(throwsSpecifier: .keyword(.throws, leadingTrivia: .space)))
            if fixed.returnClause != nil { fixed.effectSpecifiers?.throwsClause?.trailingTrivia = .space }
            fixed.parameterClause.trailingTrivia = []
            diagnose(
                function.signature, .notAsyncThrows(method: methodName),
                fixIts: [
                    FixIt(
                        message: APIFixIt(message: "add 'async throws'"),
                        changes: [.replace(oldNode: Syntax(function.signature), newNode: Syntax(fixed))])
                ])
        }

        // Other attributes.
        var bodyName: String?
        var headerMapNames: [(name: String, attribute: AttributeSyntax)] = []
        var methodHeaders: [(String, String)] = []
        var isForm = false
        var isMultipart = false
        var invalidations: [String] = []
        for attribute in attributes {
            switch attribute.name {
            case "Body":
                guard let name = Attributes.string(attribute.labeledArguments?.first?.expression) else {
                    diagnose(attribute, .templateNotLiteral)
                    continue
                }
                bodyName = name
            case "Headers":
                guard let headers = Attributes.headers(attribute) else {
                    diagnose(attribute, .badHeaders)
                    continue
                }
                methodHeaders = headers
            case "Invalidates":
                for argument in attribute.labeledArguments ?? [] {
                    guard let path = Attributes.string(argument.expression), path.hasPrefix("/") else {
                        diagnose(argument, .invalidationNotAPath)
                        continue
                    }
                    invalidations.append(path)
                }
            case "HeaderMap":
                guard let name = Attributes.string(attribute.labeledArguments?.first?.expression) else {
                    diagnose(attribute, .templateNotLiteral)
                    continue
                }
                headerMapNames.append((name, attribute))
            case "FormURLEncoded": isForm = true
            case "Multipart": isMultipart = true
            default: break
            }
        }
        if isForm && isMultipart, let attribute = attributes.first(where: { $0.name == "Multipart" }) {
            diagnose(attribute, .formAndMultipart)
        }
        if bodyName != nil && (isForm || isMultipart), let attribute = attributes.first(where: { $0.name == "Body" }) {
            diagnose(attribute, .bodyWithFormOrMultipart)
        }

        // Parameters and what consumes them.
        let parameters = function.signature.parameterClause.parameters.map { syntax in
            let name = (syntax.secondName ?? syntax.firstName).text
            let label = syntax.firstName.text
            let wireName = (label == "_" ? name : label).trimmingBackticks
            return Parameter(syntax: syntax, name: name, wireName: wireName)
        }
        func parameter(named name: String) -> Parameter? {
            parameters.first { $0.name.trimmingBackticks == name } ?? parameters.first { $0.wireName == name }
        }
        // The expansion's own names give way to parameters of the same name (`request`, `client`).
        let builder =
            parameters.contains { $0.name.trimmingBackticks == "request" } ? context.makeUniqueName("request").text : "request"
        let client = parameters.contains { $0.name.trimmingBackticks == "client" } ? "self.client" : "client"
        var consumed = Set<String>()
        var lines: [String] = ["var \(builder) = RequestBuilder(.\(verb), \(literal(template)))"]

        // Headers: the protocol's first, then the method's (which win).
        let allHeaders = sharedHeaders.map { ($0.0, $0.1, true) } + methodHeaders.map { ($0.0, $0.1, false) }
        for (name, value, isShared) in allHeaders {
            guard let placeholders = Placeholders.find(in: value) else {
                diagnose(verbAttribute, .unclosedPlaceholder)
                continue
            }
            if placeholders.isEmpty {
                lines.append("\(builder).setHeader(\(literal(name)), \(literal(value)))")
                continue
            }
            // A protocol-wide header applies only to methods that have its parameters.
            if isShared, placeholders.contains(where: { parameter(named: $0) == nil }) { continue }
            var names: [String] = []
            for placeholder in placeholders {
                guard let match = parameter(named: placeholder) else {
                    diagnose(function.name, .placeholderWithoutParameter(placeholder: placeholder))
                    continue
                }
                consumed.insert(match.name)
                names.append(match.name)
            }
            if value == "{\(placeholders[0])}", placeholders.count == 1, let only = names.first {
                lines.append("\(builder).setHeader(\(literal(name)), \(only))")
            } else if names.count == placeholders.count {
                // A placeholder may appear more than once (`{id}-{id}`): each occurrence gets the value.
                var unique: [String] = []
                for name in names where !unique.contains(name) { unique.append(name) }
                let condition = unique.map { "!\($0).parameterStrings.isEmpty" }.joined(separator: " && ")
                let namesByPlaceholder = Dictionary(zip(placeholders, names), uniquingKeysWith: { first, _ in first })
                let interpolated = Placeholders.interpolate(value, names: namesByPlaceholder)
                lines.append("if \(condition) {\n    \(builder).setHeader(\(literal(name)), \(interpolated))\n}")
            }
        }

        // Header maps: a dictionary parameter's pairs as header fields.
        for (name, attribute) in headerMapNames {
            guard let match = parameter(named: name) else {
                diagnose(attribute, .headerMapWithoutParameter(name: name))
                continue
            }
            consumed.insert(match.name)
            lines.append("\(builder).setHeaders(\(match.name))")
        }

        /// A placeholder no parameter fills, with a fix-it when one parameter's name differs from it only
        /// in case or underscores (`{user_id}` for `userId`): the template rewritten to name it.
        func diagnoseUnfilled(_ placeholder: String) {
            func plain(_ text: String) -> String { text.lowercased().filter { $0 != "_" && $0 != "-" } }
            let near = parameters.filter { plain($0.name.trimmingBackticks) == plain(placeholder) }
            guard near.count == 1, let candidate = near.first else {
                diagnose(templateExpression, .placeholderWithoutParameter(placeholder: placeholder))
                return
            }
            let name = candidate.name.trimmingBackticks
            let fixed = template.replacing("{\(placeholder)}", with: "{\(name)}")
            diagnose(
                templateExpression, .placeholderWithoutParameter(placeholder: placeholder),
                fixIts: [
                    FixIt(
                        message: APIFixIt(message: "use the parameter '\(name)'"),
                        changes: [
                            .replace(
                                oldNode: Syntax(templateExpression),
                                newNode: Syntax(
                                    StringLiteralExprSyntax(content: fixed).with(
                                        \.trailingTrivia, templateExpression.trailingTrivia)))
                        ])
                ])
        }

        // Path placeholders.
        let path = String(template.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        guard let placeholders = Placeholders.find(in: path) else {
            diagnose(templateExpression, .unclosedPlaceholder)
            return nil
        }
        var seenPlaceholders = Set<String>()
        for placeholder in placeholders where seenPlaceholders.insert(placeholder).inserted {
            guard let match = parameter(named: placeholder) else {
                diagnoseUnfilled(placeholder)
                continue
            }
            if match.isOptional, let optional = match.syntax.type.as(OptionalTypeSyntax.self) {
                var fixed = match.syntax
                fixed.type = optional.wrappedType
                diagnose(
                    match.syntax.type, .optionalPathParameter(name: match.name),
                    fixIts: [
                        FixIt(
                            message: APIFixIt(message: "make '\(match.name)' non-optional"),
                            changes: [.replace(oldNode: Syntax(match.syntax), newNode: Syntax(fixed))])
                    ])
                continue
            }
            consumed.insert(match.name)
            lines.append("\(builder).setPathValue(\(match.name), for: \(literal(placeholder)))")
        }

        // Query placeholders (`/search?q={query}`): the parameter fills the item instead of adding one.
        let staticQuery = template.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).dropFirst().first
        if let staticQuery {
            guard let queryPlaceholders = Placeholders.find(in: String(staticQuery)) else {
                diagnose(templateExpression, .unclosedPlaceholder)
                return nil
            }
            var seenQueryPlaceholders = Set<String>()
            for placeholder in queryPlaceholders where seenQueryPlaceholders.insert(placeholder).inserted {
                guard let match = parameter(named: placeholder) else {
                    diagnoseUnfilled(placeholder)
                    continue
                }
                consumed.insert(match.name)
                lines.append("\(builder).setQueryValue(\(match.name), for: \(literal(placeholder)))")
            }
        }

        // What a success changes besides the request's URL: its placeholders filled as the path's are.
        if !invalidations.isEmpty {
            for template in invalidations {
                guard let found = Placeholders.find(in: template) else {
                    diagnose(verbAttribute, .unclosedPlaceholder)
                    continue
                }
                for placeholder in found where seenPlaceholders.insert(placeholder).inserted {
                    guard let match = parameter(named: placeholder) else {
                        diagnose(function.name, .placeholderWithoutParameter(placeholder: placeholder))
                        continue
                    }
                    lines.append("\(builder).setPathValue(\(match.name), for: \(literal(placeholder)))")
                }
            }
            lines.append("\(builder).invalidates = [\(invalidations.map(literal).joined(separator: ", "))]")
        }

        // The body.
        if let bodyName {
            if let match = parameters.first(where: { $0.name == bodyName || $0.wireName == bodyName }) {
                consumed.insert(match.name)
                lines.append("\(builder).setBody(\(match.name))")
            } else if let attribute = attributes.first(where: { $0.name == "Body" }) {
                diagnose(attribute, .bodyWithoutParameter(name: bodyName))
            }
        }

        // Everything else: query items, form fields or parts.
        let call = isMultipart ? "addPart" : isForm ? "addFormField" : "addQuery"
        for parameter in parameters where !consumed.contains(parameter.name) {
            lines.append("\(builder).\(call)(\(literal(parameter.wireName)), \(parameter.name))")
        }
        guard ok else { return nil }
        if lines.count == 1 { lines[0] = "let" + lines[0].dropFirst(3) }  // nothing to add: no `var` warning
        lines.append("return Endpoint(\(builder))")

        // Sending and the result: the endpoint's request, sent as the method's return type says.
        let arguments = parameters.map { parameter in
            let label = parameter.syntax.firstName.text
            return label == "_" ? parameter.name : "\(label): \(parameter.name)"
        }
        let endpointCall = "self.endpoints.\(methodName)(\(arguments.joined(separator: ", "))).request"
        let send = Self.sendExpression(client: client, request: endpointCall)
        let sending =
            errorBody.map { "do {\n    \(send)\n} catch {\n    throw \(client).attachingErrorBody(to: error, as: \($0).self)\n}" }
            ?? send

        var signature = function.signature.trimmed
        signature.leadingTrivia = []
        let generics = function.genericParameterClause?.trimmedDescription ?? ""
        let whereClause = function.genericWhereClause.map { " " + $0.trimmedDescription } ?? ""
        func indented(_ text: String, by spaces: Int) -> String {
            let prefix = String(repeating: " ", count: spaces)
            return text.split(separator: "\n", omittingEmptySubsequences: false).map { prefix + $0 }.joined(separator: "\n")
        }
        let value = function.signature.returnClause?.type.trimmedDescription ?? "Void"
        let parametersText = function.signature.parameterClause.trimmedDescription
        let endpoint = """
                    \(access)func \(methodName)\(generics)\(parametersText) -> Endpoint<\(value)>\(whereClause) {
            \(indented(lines.joined(separator: "\n"), by: 12))
                    }
            """
        let method = """
                \(access)func \(methodName)\(generics)\(signature.trimmedDescription)\(whereClause) {
            \(indented(sending, by: 8))
                }
            """
        return Generated(endpoint: endpoint, method: method)
    }

    /// The statement that sends the request and produces the method's result: always the same call,
    /// whose overloads on `RestClient` are chosen by the method's return type (so a typealias works,
    /// and the macro never has to read the type's spelling).
    static func sendExpression(client: String = "client", request: String = "request") -> String {
        "return try await \(client).result(of: \(request))"
    }
}

/// `{name}` placeholders in templates and header values.
extension Placeholders {
    /// A Swift string literal with each placeholder replaced by the parameter's text.
    static func interpolate(_ text: String, names: [String: String]) -> String {
        var output = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            output += String(literal(String(rest[..<open])).dropFirst().dropLast())
            let placeholder = String(rest[rest.index(after: open)..<close])
            if let name = names[placeholder] { output += "\\(\(name).parameterStrings.joined(separator: \", \"))" }
            rest = rest[rest.index(after: close)...]
        }
        output += String(literal(String(rest)).dropFirst().dropLast())
        return "\"" + output + "\""
    }
}

extension String {
    /// `default` for `` `default` ``: the name a keyword escaped with backticks stands for.
    var trimmingBackticks: String {
        hasPrefix("`") && hasSuffix("`") && count >= 2 ? String(dropFirst().dropLast()) : self
    }
}
