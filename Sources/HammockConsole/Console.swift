import HTTPTypes
public import HammockServer

extension MockServer {
    /// Serves the console: a page a browser gets at the admin path (`/__hammock/`) showing the resources
    /// with their routes and record counts, a data browser per resource (paged, sortable; create, edit and
    /// delete through the mock's own API), the stubs, the live request log (the journal's event stream),
    /// and fault and latency switches (the admin API). Plain HTML, CSS and JavaScript embedded in this
    /// module: no build step, nothing fetched from elsewhere, so it works offline.
    ///
    /// The page, its script and its style sheet are served without the admin token (they hold no data);
    /// with a token set, the page asks for it and sends it with its calls. Every other client still gets
    /// the admin API's JSON index at the admin path.
    ///
    /// ```swift
    /// let server = try await MockServer(resources: [people])
    /// server.serveConsole()     // open http://127.0.0.1:PORT/__hammock/ in a browser
    /// ```
    /// - Returns: Whether it is served: false when the server has no admin API.
    @discardableResult
    public func serveConsole() -> Bool {
        guard
            setAdminPage({ request in
                // Its files are named under the admin path, whichever it is (`--admin-path`).
                var admin = request.path
                while admin.hasSuffix("/") { admin.removeLast() }
                return Console.answer(Console.page(admin: admin), type: "text/html; charset=utf-8")
            })
        else { return false }
        addAdminEndpoint("console.js", requiresToken: false) { _ in
            Console.answer(PackageResources.console_js, type: "text/javascript; charset=utf-8")
        }
        addAdminEndpoint("console.css", requiresToken: false) { _ in
            Console.answer(PackageResources.console_css, type: "text/css; charset=utf-8")
        }
        return true
    }
}

enum Console {
    /// Nothing but the page's own files and calls to this server: no inline script, no other origin.
    static let policy =
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    static func page(admin: String) -> [UInt8] {
        let marker = Array("%ADMIN%".utf8)
        let replacement = Array(escapedAttribute(admin).utf8)
        let template = PackageResources.console_html
        var page: [UInt8] = []
        page.reserveCapacity(template.count + 64)
        var index = 0
        while index < template.count {
            if template[index] == marker[0], template[index...].starts(with: marker) {
                page += replacement
                index += marker.count
            } else {
                page.append(template[index])
                index += 1
            }
        }
        return page
    }

    /// An admin path is checked to be a path (letters, digits and `-._~/`), but it goes into an attribute:
    /// escape what HTML would read.
    static func escapedAttribute(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "\"": result += "&quot;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }

    static func answer(_ bytes: [UInt8], type: String) -> MockResponse {
        var fields = HTTPFields()
        fields[.contentType] = type
        fields[.cacheControl] = "no-cache"
        if let policy = HTTPField.Name("Content-Security-Policy") { fields[policy] = Self.policy }
        if let sniffing = HTTPField.Name("X-Content-Type-Options") { fields[sniffing] = "nosniff" }
        return MockResponse(status: .ok, headerFields: fields, body: bytes)
    }
}
