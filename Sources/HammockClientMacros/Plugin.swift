import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct HammockClientMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [APIMacro.self, MarkerMacro.self]
}
