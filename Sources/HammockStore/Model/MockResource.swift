public import HammockJSON

/// A REST resource: a name, typed fields, a primary key, the allowed actions and its parents.
///
/// The server derives routes, validation and storage from it:
///
/// ```swift
/// let people = MockResource("people", fields: ["name": .string, "numberOfKids": .integer])
/// let cars = MockResource("cars", fields: ["name": .string, "color": .string], parents: ["people"])
/// // GET/POST /people, GET/PUT/PATCH/DELETE /people/:id,
/// // GET/POST /cars, GET/PUT/PATCH/DELETE /cars/:id, GET/POST /people/:id/cars (foreign key person_id)
/// ```
///
/// The primary key defaults to `id`, a generated integer. Naming a declared `string` or `integer`
/// field as the primary key makes it a client-supplied key instead; with a ``keyFormat`` the server
/// makes a string key a create leaves out, as an API's own ids are made:
///
/// ```swift
/// var assistants = MockResource("assistants", fields: ["id": .string, "name": .string], primaryKey: "id")
/// assistants.keyFormat = .pattern("^asst_[A-Za-z0-9]{24}$")   // POST {"name": "x"} → "id": "asst_Xk2…"
/// ```
public struct MockResource: Sendable, Hashable {
    /// The name, used as the first path segment (`people` in `/people/1`).
    public var name: String
    /// The declared fields, in the order responses list them.
    public var fields: [Field]
    /// The name of the primary key.
    public var primaryKey: String
    /// The actions the routes allow.
    public var actions: Actions
    /// The resources this one belongs to (one-to-many, parent to child).
    public var parents: [Parent]
    /// How the server makes the key of a record a create leaves it out of; `nil` (the default) when a
    /// client-chosen key must be sent. Only for a declared `string` primary key.
    public var keyFormat: KeyFormat?
    /// Whether every key is the server's to make: a key a create sends is ignored and one is made, as an
    /// API document's `readOnly` key is (a client does not choose it, and a second create sending the
    /// same one is no conflict). Only with a ``keyFormat``; `false` (the default) keeps a key sent.
    public var keyIsReadOnly = false
    /// How many records a list answers when the request asks for no page, and the size of a `_page`
    /// without `_per_page`: what an API documents as its `limit`'s default or its list's `maxItems`.
    /// `nil` (the default) answers every record unless asked, as json-server does (and pages of 10).
    public var defaultPageSize: Int?
    /// Whether answers leave out the members whose value is `null` (a field no one set, one cleared)
    /// rather than answer `null`: what an API document means by an optional member that is not nullable.
    /// `false` (the default) answers every declared field.
    public var omitsNulls = false
    /// The fields whose `null` ``omitsNulls`` leaves out, when only some: an API document's optional
    /// members that are not nullable, where a nullable member every answer carries must stay `null`.
    /// `nil` (the default) leaves out every `null` member.
    public var nullOmittedFields: Set<String>?
    /// An API's own names for its lists' query parameters, each with the query language's name it stands for:
    /// `["limit": "_limit", "offset": "_start", "sort": "_sort"]`. A list reads `?limit=10&offset=20` as
    /// `?_limit=10&_start=20`, and its `Link` header keeps the API's names.
    public var queryNames: [String: String] = [:]
    /// Fields the server fills when a create leaves them out (or sends `null`), each made anew per record:
    /// `["created": .now, "ticket": .format(.pattern("^T-[0-9]{6}$"))]`. What an API document's
    /// read-only members that every answer carries are (a creation date, a confirmation code).
    public var madeFields: [String: MadeValue] = [:]
    /// The status an action's success answers with, where it is not the usual one (list and show 200,
    /// create 201, update 200, delete 204): `[.create: 200]` for an API whose create answers 200. Keyed
    /// by single actions; a 204 or 205 answers without a body.
    public var successStatuses: [Actions: Int] = [:]
    /// Whether `/name` (the top-level list and create) is served; `false` for a resource an API reaches only
    /// under its parent (`/channels/:id/messages`): its records are listed and created there, and read,
    /// changed and deleted at `/messages/:id`.
    public var servesTopLevel = true
    /// How a list answers when an API wraps its records in an object (`{"object": "list", "data": [...],
    /// "has_more": false}`, `{"items": [...], "total": 42}`); `nil` (the default) answers the array itself.
    public var listEnvelope: ListEnvelope?
    /// Whether answers carry the primary key as a member; `false` for an API whose records do not (a
    /// document whose `Pet` has no `id`): the key still addresses the record (`/pets/3`), and a create's
    /// `Location` names it, but no body shows it.
    public var answersKey = true

    /// The object a list's records are answered in (``MockResource/listEnvelope``).
    public struct ListEnvelope: Sendable, Hashable {
        /// The member that holds the page of records.
        public var items: String
        /// The member that holds how many records match (what `X-Total-Count` says), if any.
        public var total: String?
        /// The member that says whether a next page exists (a `Link` to it), if any.
        public var hasMore: String?
        /// The member that holds the next page's `_cursor` (`null` on the last page), if any.
        public var nextCursor: String?
        /// Other members, answered as they are (`"object": "list"`).
        public var members: JSONObject

        /// An envelope.
        public init(
            items: String, total: String? = nil, hasMore: String? = nil, nextCursor: String? = nil,
            members: JSONObject = [:]
        ) {
            self.items = items
            self.total = total
            self.hasMore = hasMore
            self.nextCursor = nextCursor
            self.members = members
        }
    }

    /// Creates a resource.
    /// - Parameters:
    ///   - name: The collection name, used in paths.
    ///   - fields: The fields in response order; a dictionary literal keeps its order.
    ///   - primaryKey: The key's name. If it names a declared field, clients supply the key.
    ///   - actions: The allowed actions; all by default.
    ///   - parents: Parent resources; a string literal names the parent with the default foreign key.
    public init(
        _ name: String,
        fields: KeyValuePairs<String, FieldType>,
        primaryKey: String = "id",
        actions: Actions = .all,
        parents: [Parent] = []
    ) {
        self.init(
            name, fields: fields.map { Field($0.key, $0.value) }, primaryKey: primaryKey, actions: actions, parents: parents)
    }

    /// Creates a resource from an array of fields.
    public init(
        _ name: String,
        fields: [Field],
        primaryKey: String = "id",
        actions: Actions = .all,
        parents: [Parent] = []
    ) {
        self.name = name
        self.fields = fields
        self.primaryKey = primaryKey
        self.actions = actions
        self.parents = parents
        keyFormat = nil
    }

    /// The declared field named `name`, if any.
    public func field(named name: String) -> Field? { fields.first { $0.name == name } }

    /// Whether a field's `null` is left out of answers (``omitsNulls``, ``nullOmittedFields``).
    public func omitsNull(of field: String) -> Bool { omitsNulls && nullOmittedFields.map { $0.contains(field) } != false }

    /// Whether answers show records other than as stored: without `null` members (``omitsNulls``),
    /// without write-only fields, or without the key (``answersKey``).
    public var reshapesAnswers: Bool { omitsNulls || !answersKey || fields.contains(where: \.isWriteOnly) }

    /// `record` as answers show it: without write-only fields, without the key when the resource does
    /// not answer it, and without `null` members when the resource ``omitsNulls``.
    public func answer(_ record: JSONObject) -> JSONObject {
        guard reshapesAnswers else { return record }
        var hidden = Set(fields.filter(\.isWriteOnly).map(\.name))
        if !answersKey { hidden.insert(primaryKey) }
        func omitted(_ name: String, _ value: JSON) -> Bool {
            omitsNulls && value == .null && nullOmittedFields.map { $0.contains(name) } != false
        }
        guard record.contains(where: { hidden.contains($0.key) || omitted($0.key, $0.value) }) else { return record }
        var kept = JSONObject(minimumCapacity: record.count)
        for (name, value) in record where !hidden.contains(name) && !omitted(name, value) { kept[name] = value }
        return kept
    }
}

extension MockResource {
    /// How the server makes a client-chosen string key that a create leaves out (or sends as `null`).
    /// A key the client sends is kept, as before.
    public enum KeyFormat: Sendable, Hashable {
        /// A random version 4 UUID in lowercase (`"0e6f3c1a-58b2-4d3e-9a41-7c2b5e8f1d90"`).
        case uuid
        /// A string the regular expression matches (`^ord_[0-9a-f]{8}$`): literals, classes, groups,
        /// alternation and quantifiers; what would need searching (lookaround, backreferences) is
        /// refused when the resource is added.
        case pattern(String)
    }

    /// How the server makes a field's value for a create that leaves it out (``madeFields``).
    public enum MadeValue: Sendable, Hashable {
        /// The moment of the write: an RFC 3339 date-time (`2026-11-29T03:40:00Z`) in a string or date
        /// field, seconds since 1970 in an integer or float field.
        case now
        /// The day of the write, `2026-11-29`, in a string or date field.
        case today
        /// A string made as a key of this format is (a UUID, or a string the pattern matches).
        case format(KeyFormat)
    }

    /// The actions a resource's routes allow.
    public struct Actions: OptionSet, Sendable, Hashable {
        /// The raw bits.
        public let rawValue: Int
        /// Creates actions from raw bits.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// `GET /people` (and `GET /parents/:id/people`).
        public static let list = Actions(rawValue: 1 << 0)
        /// `GET /people/:id`.
        public static let show = Actions(rawValue: 1 << 1)
        /// `POST /people` (and `POST /parents/:id/people`).
        public static let create = Actions(rawValue: 1 << 2)
        /// `PUT` and `PATCH /people/:id`.
        public static let update = Actions(rawValue: 1 << 3)
        /// `DELETE /people/:id`.
        public static let delete = Actions(rawValue: 1 << 4)
        /// Every action.
        public static let all: Actions = [.list, .show, .create, .update, .delete]
        /// Reading only.
        public static let readOnly: Actions = [.list, .show]

        /// The action names used in configuration files, in a fixed order.
        public static let names: [(String, Actions)] = [
            ("list", .list), ("show", .show), ("create", .create), ("update", .update), ("delete", .delete),
        ]
    }

    /// A parent resource and the foreign key that points at it.
    public struct Parent: Sendable, Hashable, ExpressibleByStringLiteral {
        /// The parent resource's name.
        public var resource: String
        /// The foreign key field on the child; by default the singular parent name plus `_id`.
        public var foreignKey: String
        /// Whether deleting a parent deletes its children of this resource, in the same write; `false`
        /// (the default) keeps them with their foreign key `null`, as json-server does. What a document
        /// means by a child whose parent key is required and never null (a task of a project).
        public var deletesWithParent: Bool

        /// Names a parent; the foreign key defaults to `person_id` for `people`.
        public init(_ resource: String, foreignKey: String? = nil, deletesWithParent: Bool = false) {
            self.resource = resource
            self.foreignKey = foreignKey ?? Inflection.singular(of: resource) + "_id"
            self.deletesWithParent = deletesWithParent
        }

        /// Names a parent with the default foreign key.
        public init(stringLiteral value: String) { self.init(value) }
    }
}

/// The old name of ``MockResource``, which `HammockResources.Resource` (the client-side observable
/// resource) shares: a file that imports both could not say which it meant.
@available(*, deprecated, renamed: "MockResource", message: "the server's resource is MockResource; Resource is the client's")
public typealias Resource = MockResource
