public import HammockJSON

/// What a list request asks for beyond the whole table: filters, a search, an order and a page.
///
/// Parsed from the query string of `GET /people` and `GET /people/1/cars`, in the form json-server
/// users know:
///
/// ```text
/// GET /people?numberOfKids_gte=2&name_like=am&_sort=-numberOfKids,name&_page=2&_per_page=20
/// ```
/// Values are typed by the field they filter: `?numberOfKids=2` matches the integer 2 and
/// `?numberOfKids=two` is a 400 naming the parameter. A custom controller can parse and apply one too:
///
/// ```swift
/// let query = try ListQuery(parsing: request.request.query, for: request.schema)
/// let (page, total) = try await request.store.storedRecords(of: request.schema, answering: query)
/// ```
public struct ListQuery: Sendable, Hashable {
    /// How a filter compares a field with its values: the suffix after the field's name.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        /// `name=amy`: equal to any of the values.
        case equal = ""
        /// `name_ne=amy`: equal to none of the values.
        case notEqual = "ne"
        /// `numberOfKids_gt=2`.
        case greater = "gt"
        /// `numberOfKids_gte=2`.
        case greaterOrEqual = "gte"
        /// `numberOfKids_lt=2`.
        case less = "lt"
        /// `numberOfKids_lte=2`.
        case lessOrEqual = "lte"
        /// `name_like=am`: contains the text, ignoring case; with `%`, matches the whole value where
        /// each `%` stands for any run of characters (`name_like=a%y`).
        case like
        /// `avatar_null=true`: the field is null (`false`: it is not).
        case null
    }

    /// One condition on one field. Values of a repeated equality or `_like` are alternatives (OR);
    /// every other repeated condition must hold (AND), so `?color_ne=red&color_ne=blue` excludes both.
    public struct Filter: Sendable, Hashable {
        /// The field compared.
        public var field: String
        /// The comparison.
        public var comparison: Operator
        /// The values, typed by the field (`null` for the literal `null`).
        public var values: [JSON]

        /// A filter on `field`: `Filter(field: "color", values: ["red", "blue"])` is `?color=red&color=blue`.
        public init(field: String, comparison: Operator = .equal, values: [JSON]) {
            self.field = field
            self.comparison = comparison
            self.values = values
        }
    }

    /// One key of the order, in priority order.
    public struct SortKey: Sendable, Hashable {
        /// The field sorted on.
        public var field: String
        /// Largest first.
        public var isDescending: Bool

        /// A key of the order: `SortKey(field: "age", isDescending: true)` is `_sort=-age`.
        public init(field: String, isDescending: Bool = false) {
            self.field = field
            self.isDescending = isDescending
        }
    }

    /// Which part of the matching records is answered.
    public enum Window: Sendable, Hashable {
        /// `_page` and `_per_page`: page `number` (from 1) of `size` records.
        case page(number: Int, size: Int)
        /// `_start` with `_end` or `_limit`: records from `start` (from 0) up to `end` (excluded).
        case range(start: Int, end: Int?)
    }

    /// One `name=value` of the query string, decoded.
    public struct Item: Sendable, Hashable {
        /// The decoded name.
        public var name: String
        /// The decoded value.
        public var value: String

        package init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Every filter, all of which a record must pass.
    public var filters: [Filter] = []
    /// `q`: text that one of the record's string fields must contain, ignoring case.
    public var search: String?
    /// `_sort` (and `_order`): the order; the primary key breaks ties and orders lists without it.
    public var sort: [SortKey] = []
    /// The page asked for, if any.
    public var window: Window?
    /// `_embed`: child resources whose records are added to each record, as an array under their name.
    public var embed: [String] = []
    /// `_expand`: parents whose record is added to each record, under the name given.
    public var expand: [String] = []
    /// Parameters that name no field and no option: ignored, and listed in a response header.
    public var ignored: [String] = []
    /// The query string's items, in order, as decoded.
    public var items: [Item] = []
    /// Whether a range was asked for with `_end` rather than `_limit`, so links keep that form.
    package var rangeUsesEnd = false
    /// Whether the page was asked for with `_cursor`, so the answer names the next one by cursor.
    public var usesCursor = false
    /// The API's own name of each query-language parameter the request used under it
    /// (``MockResource/queryNames``: `_limit` → `limit`), so links to other pages keep the API's names.
    package var documentedNames: [String: String] = [:]

    /// A query built in code; `ListQuery()` is the whole list in key order.
    ///
    /// ```swift
    /// let query = ListQuery(filters: [.init(field: "numberOfKids", comparison: .greater, values: [2])],
    ///                       sort: [.init(field: "name")], window: .page(number: 1, size: 20))
    /// ```
    public init(filters: [Filter] = [], search: String? = nil, sort: [SortKey] = [], window: Window? = nil) {
        self.filters = filters
        self.search = search
        self.sort = sort
        self.window = window
    }

    /// Whether the query asks for anything beyond the whole list in key order.
    public var isEmpty: Bool {
        filters.isEmpty && search == nil && sort.isEmpty && window == nil && embed.isEmpty && expand.isEmpty
    }

    /// Whether `name` is one of the parameters that page a list, which links to other pages replace (a
    /// switch: every parameter of every list answer is asked, and hashing it into a set cost more).
    package static func isWindowParameter(_ name: String) -> Bool {
        switch name {
        case "_page", "_per_page", "_start", "_end", "_limit", "_cursor": true
        default: false
        }
    }
}
