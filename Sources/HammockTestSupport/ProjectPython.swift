import Foundation

/// The project's Python, with the tools the tests run (httpbin, gunicorn, openapi-spec-validator):
/// `.venv/bin/python3` at the package's root, which `scripts/setup --tests` makes. A stock Debian 12 or
/// Ubuntu 23.04+ refuses `pip install` into the system Python (PEP 668), so the tools live there.
public enum ProjectPython {
    /// The virtual environment's `python3`; `python3` from the `PATH` when there is none (a machine set up
    /// by hand), so a test that needs a tool fails naming it rather than the path.
    public static var executable: String {
        let candidate = packageRoot + ".venv/bin/python3"
        return FileManager.default.isExecutableFile(atPath: candidate) ? candidate : "python3"
    }

    /// The package's root, with a trailing slash: this file is `Sources/HammockTestSupport/…` in it.
    public static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path + "/"
    }
}
