// `import HammockTesting` also brings the dependency-free test support: ManualClock, eventually,
// SplitMix64 and RecordingHTTPServer live in HammockTestSupport, which tests that do not need the mock
// server import on their own.
@_exported public import HammockTestSupport
