// `import HammockHTTPServer` is enough to describe resources and serve them over HTTP.
@_exported public import HammockServer
