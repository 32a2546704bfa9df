// `import HammockServer` is enough to describe resources, build requests and read JSON.
@_exported public import HTTPTypes
@_exported public import HammockJSON
@_exported public import HammockStore
