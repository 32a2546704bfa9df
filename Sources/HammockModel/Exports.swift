@_exported public import HammockJSON
