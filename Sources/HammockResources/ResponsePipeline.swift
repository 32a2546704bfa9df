/// The steps that turn a response's bytes into content, in stages.
///
/// ```swift
/// service.configure("/users/*") {
///     $0.pipeline[.model] = [.decoding(User.self)]
/// }
/// service.configure("/legacy/**") {
///     $0.pipeline[.parsing].append(.content(JSON.self) { json in json["payload"] ?? .null })
/// }
/// ```
/// Stages run in order: raw data, decoding (bytes → text), parsing (→ `JSON`), model (→ your types),
/// cleanup. The standard pipeline decodes `text/*` to `String` and parses JSON media types to `JSON`;
/// the model stage is empty until you configure it. Error bodies go through the transformers that say
/// ``ResponseTransformer/appliesToErrors`` (text and JSON), so errors carry the server's message.
public struct ResponsePipeline: Sendable {
    /// A pipeline stage, in running order.
    public enum Stage: Int, CaseIterable, Sendable, Comparable {
        /// Before anything: the bytes as they came.
        case rawData
        /// Bytes to text.
        case decoding
        /// Text or bytes to structured data.
        case parsing
        /// Structured data to models.
        case model
        /// After everything.
        case cleanup

        public static func < (lhs: Stage, rhs: Stage) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    private var stages: [[ResponseTransformer]] = Array(repeating: [], count: Stage.allCases.count)

    /// An empty pipeline: content stays bytes.
    public static var empty: ResponsePipeline { ResponsePipeline(empty: ()) }

    /// The standard pipeline: text to `String`, JSON to `JSON`.
    public init() {
        self[.decoding] = [.text]
        self[.parsing] = [.json]
    }

    private init(empty: Void) {}

    /// The transformers of one stage.
    public subscript(stage: Stage) -> [ResponseTransformer] {
        get { stages[stage.rawValue] }
        set { stages[stage.rawValue] = newValue }
    }

    /// This pipeline without the stages after `stage`: mutation responses are parsed (raw data, text,
    /// JSON) but never run through the resource's model, which describes its representation, not what
    /// a POST answers.
    public func through(_ stage: Stage) -> ResponsePipeline {
        var pipeline = self
        for later in Stage.allCases where later > stage { pipeline[later] = [] }
        return pipeline
    }

    /// Removes every transformer from every stage.
    public mutating func removeAll() {
        stages = Array(repeating: [], count: Stage.allCases.count)
    }

    /// Runs `entity` through the stages. For error bodies only transformers that apply to errors run,
    /// and their failures are ignored (the error is what matters).
    func process(_ entity: Entity, isError: Bool = false) throws -> Entity {
        var entity = entity
        for stage in stages {
            for transformer in stage where (!isError || transformer.appliesToErrors) && transformer.accepts(entity.contentType) {
                if isError {
                    entity = (try? transformer.transform(entity)) ?? entity
                } else {
                    entity = try transformer.transform(entity)
                }
            }
        }
        return entity
    }
}
