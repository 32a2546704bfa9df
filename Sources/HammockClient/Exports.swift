@_exported public import Foundation
@_exported public import HTTPTypes
@_exported public import HammockJSON
