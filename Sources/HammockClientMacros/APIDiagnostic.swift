import SwiftDiagnostics

/// Mistakes `@API` reports at compile time, each with what to do about it.
enum APIDiagnostic: DiagnosticMessage {
    case notAProtocol
    case unsupportedMember
    case missingVerb(method: String)
    case multipleVerbs(method: String)
    case templateNotLiteral
    case notAsyncThrows(method: String)
    case placeholderWithoutParameter(placeholder: String)
    case optionalPathParameter(name: String)
    case bodyWithoutParameter(name: String)
    case headerMapWithoutParameter(name: String)
    case bodyWithFormOrMultipart
    case formAndMultipart
    case badHeaders
    case unclosedPlaceholder
    case invalidationNotAPath

    var message: String {
        switch self {
        case .notAProtocol: "@API can only be applied to a protocol"
        case .unsupportedMember: "@API protocols may only declare methods; move properties to an extension"
        case .missingVerb(let method):
            "'\(method)' needs an HTTP method attribute: @GET, @POST, @PUT, @PATCH, @DELETE or @HEAD with a path"
        case .multipleVerbs(let method): "'\(method)' has more than one HTTP method attribute"
        case .templateNotLiteral: "the path must be a string literal without interpolation"
        case .invalidationNotAPath:
            "@Invalidates takes path templates as string literals starting with '/', such as \"/people/{id}\""
        case .notAsyncThrows(let method): "'\(method)' must be 'async throws': every call goes over the network and can fail"
        case .placeholderWithoutParameter(let placeholder):
            "no parameter named '\(placeholder)' fills the placeholder {\(placeholder)}"
        case .optionalPathParameter(let name):
            "path parameter '\(name)' cannot be optional: a URL path has no way to leave a segment out"
        case .bodyWithoutParameter(let name): "@Body names '\(name)', but the method has no such parameter"
        case .headerMapWithoutParameter(let name):
            "@HeaderMap names '\(name)', but the method has no such parameter; name a [String: String] parameter"
        case .bodyWithFormOrMultipart: "@Body cannot be combined with @FormURLEncoded or @Multipart: the body is one or the other"
        case .formAndMultipart: "@FormURLEncoded and @Multipart cannot both apply: choose one body encoding"
        case .badHeaders: "@Headers takes a dictionary literal of string literals, like [\"Accept\": \"application/json\"]"
        case .unclosedPlaceholder: "the path has a '{' without a matching '}'"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "HammockClientMacros", id: "\(self)") }
    var severity: DiagnosticSeverity { .error }
}

struct APIFixIt: FixItMessage {
    let message: String
    var fixItID: MessageID { MessageID(domain: "HammockClientMacros", id: message) }
}
