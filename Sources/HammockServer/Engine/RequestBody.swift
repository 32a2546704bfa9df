import HTTPTypes
import HammockJSON
import HammockStore
import HammockWire

enum RequestBody {
    /// Decodes a create or update body into an object, or throws the 4xx that explains why not.
    static func decode(_ request: MockRequest, limit: Int) throws(HTTPProblem) -> (JSONObject, BodyEncoding) {
        guard request.body.count <= limit else { throw HTTPProblem.contentTooLarge(limit: limit) }
        let mediaType = request.headerFields[.contentType].map(mediaTypeName) ?? ""
        switch mediaType {
        case "", "application/json", "text/json":
            return (try decodeJSON(request.body), .json)
        case "application/x-www-form-urlencoded":
            return (try FormURLEncoded.decode(request.body), .form)
        case "multipart/form-data":
            let contentType = request.headerFields[.contentType] ?? ""
            return (try MultipartForm.decode(request.body, contentType: contentType), .form)
        case let type where type.hasPrefix("application/") && type.hasSuffix("+json"):
            return (try decodeJSON(request.body), .json)
        default:
            throw HTTPProblem(
                .unsupportedMediaType,
                detail:
                    "Content-Type '\(mediaType)' is not supported; send application/json, application/x-www-form-urlencoded or multipart/form-data"
            )
        }
    }

    /// The media type of a `Content-Type` value, lowercased, without parameters.
    static func mediaTypeName(_ value: String) -> String { HeaderValue.mediaType(of: value) }

    static func decodeJSON(_ body: [UInt8]) throws(HTTPProblem) -> JSONObject {
        guard !body.isEmpty else { throw HTTPProblem.badRequest("The request body is empty; send a JSON object") }
        let value: JSON
        do {
            value = try JSON(parsing: body)
        } catch {
            throw HTTPProblem(
                .badRequest, title: "Malformed JSON", detail: "The body is not valid JSON: \(error.description)",
                extensions: ["offset": .integer(error.offset), "line": .integer(error.line), "column": .integer(error.column)])
        }
        guard case .object(let object) = value else {
            let kind = value.isNull ? "null" : ("aeiou".contains(value.kindName.prefix(1)) ? "an " : "a ") + value.kindName
            throw HTTPProblem.badRequest("The body must be a JSON object, not \(kind)")
        }
        return object
    }
}

extension HTTPProblem {
    /// 413 Content Too Large.
    package static func contentTooLarge(limit: Int) -> HTTPProblem {
        HTTPProblem(
            .contentTooLarge, detail: "The body is larger than the limit of \(limit) bytes",
            extensions: ["limit": .integer(limit)])
    }
}

/// `application/x-www-form-urlencoded` bodies (WHATWG URL standard): `+` is a space, `%XX` a byte.
package enum FormURLEncoded {
    package static func decode(_ body: [UInt8]) throws(HTTPProblem) -> JSONObject {
        var object = JSONObject()
        for pair in body.split(separator: UInt8(ascii: "&")) where !pair.isEmpty {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentEncoding.decodeForm(parts[0]),
                let value = parts.count > 1 ? PercentEncoding.decodeForm(parts[1]) : ""
            else {
                throw HTTPProblem.badRequest("The form body has a malformed percent-encoding or is not UTF-8")
            }
            object[name] = .string(value)
        }
        return object
    }
}

/// `multipart/form-data` bodies (RFC 7578) as the values a create or update reads: a text part is its
/// text, a file part (one with a `filename`) its bytes in base64, as a `blob` field holds them; a name sent
/// twice is an array of its values, in order.
package enum MultipartForm {
    package static func decode(_ body: [UInt8], contentType: String) throws(HTTPProblem) -> JSONObject {
        let form: MultipartFormData
        do {
            form = try MultipartFormData(parsing: body, contentType: contentType)
        } catch {
            throw HTTPProblem(
                .badRequest, title: "Malformed multipart body", detail: "The multipart/form-data body: \(error.reason)")
        }
        var object = JSONObject()
        for part in form.parts {
            let value: JSON
            if part.filename == nil {
                guard let text = String(validating: part.body, as: UTF8.self) else {
                    throw HTTPProblem.badRequest(
                        "The multipart part '\(part.name.prefix(100))' is not UTF-8 text; send a file with a filename")
                }
                value = .string(text)
            } else {
                value = .string(Base64.encode(part.body))
            }
            switch object[part.name] {
            case nil: object[part.name] = value
            case .array(var values)?:
                values.append(value)
                object[part.name] = .array(values)
            case let first?: object[part.name] = [first, value]
            }
        }
        return object
    }
}
