@_exported public import HammockJSON
@_exported public import HTTPTypes
@_exported public import Foundation
