// Patterns are defined in HammockWire (so that their fuzz target builds without the client) and are
// part of this module's API: `import HammockResources` is enough to use them.
@_exported public import struct HammockWire.URLPattern
