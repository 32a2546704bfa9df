import HammockJSON

/// RFC 6901 JSON pointers (`/error/message`, `/items/0`), for stub conditions and documented error
/// bodies.
enum JSONPointer {
    /// `/error/message` → `["error", "message"]` (`~1` and `~0` read as `/` and `~`); `""` → `[]` (the
    /// whole value); `nil` for text that is no pointer (it must start with `/`).
    static func tokens(of pointer: String) -> [String]? {
        guard pointer.hasPrefix("/") else { return pointer.isEmpty ? [] : nil }
        return pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
            String($0).replacing("~1", with: "/").replacing("~0", with: "~")
        }
    }

    /// The value at `pointer` in `json`, or `nil` where there is none.
    static func value(at pointer: ArraySlice<String>, in json: JSON) -> JSON? {
        guard let token = pointer.first else { return json }
        switch json {
        case .object(let object): return object[token].flatMap { value(at: pointer.dropFirst(), in: $0) }
        case .array(let items):
            guard let index = Int(token), items.indices.contains(index) else { return nil }
            return value(at: pointer.dropFirst(), in: items[index])
        default: return nil
        }
    }

    /// Replaces the value at `pointer`, which must exist; `false` when it does not.
    static func set(_ new: JSON, at pointer: ArraySlice<String>, in json: inout JSON) -> Bool {
        guard let token = pointer.first else {
            json = new
            return true
        }
        switch json {
        case .object(var object):
            guard var inner = object[token], set(new, at: pointer.dropFirst(), in: &inner) else { return false }
            object[token] = inner
            json = .object(object)
            return true
        case .array(var items):
            guard let index = Int(token), items.indices.contains(index) else { return false }
            var inner = items[index]
            guard set(new, at: pointer.dropFirst(), in: &inner) else { return false }
            items[index] = inner
            json = .array(items)
            return true
        default: return false
        }
    }
}
