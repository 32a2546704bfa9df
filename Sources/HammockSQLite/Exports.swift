// `import HammockSQLite` is enough to describe resources and keep them in SQLite.
@_exported public import HammockStore
