"""Typechecks every Swift code block of README.md, docs/*.md and the DocC catalogs against the modules the
tests' build made (scripts/check-snippets runs it).

Each block is a file of its own, typechecked as a program's main file (so top-level code and `await` work)
with the flags SwiftPM used to compile the test targets, read from .build/debug.yaml, in plain Swift 6 (not
the package's upcoming features). A block with `import` lines is checked as written; a fragment (no
imports) gets `import Foundation`, FoundationNetworking where there is one, and its catalog's module. A block that is a
fragment says what it needs in an HTML comment just above it, which Markdown and DocC do not show:

    <!-- snippet: prelude TEXT -->      TEXT (Swift, `;`-separated lines) goes before the block
    <!-- snippet: inside TEXT -->       the block goes inside TEXT's braces (`struct S { ... }`), replacing `...`
    <!-- snippet: not checked: REASON --> the block is not typechecked (an Apple-only API, output, pseudo-code)
    <!-- snippet: alone -->              the document's context (below) is left out
    <!-- snippet: generated FILE -->     the Swift that `hammock generate swift FILE` prints goes before it

A document whose blocks build on one another (a `Person`, a `server`, an `api`) gives their common context
once, anywhere in it, in a comment of its own:

    <!-- snippet context
    struct Person: Codable, Sendable { var name = "" }
    -->

A block whose module is only on Apple platforms says so with `not checked`.
"""
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST_TARGETS = ["HammockCLITests", "HammockClientServerTests", "HammockServerTests", "HammockOpenAPITests",
                "HammockResourcesTests", "HammockAsyncHTTPClientTests", "HammockModelTests", "HammockProxyTests"]


def compile_flags():
    manifest = open(os.path.join(ROOT, ".build", "debug.yaml")).read()
    flags, seen = [], set()
    for target in TEST_TARGETS:
        key = f'"C.{target}-x86_64-unknown-linux-gnu-debug-tool.module":'
        start = manifest.find(key)
        if start < 0:
            sys.exit(f"snippets: no compile command for {target} in .build/debug.yaml; run swift build --build-tests")
        args_at = manifest.find("args:", start)
        line = manifest[args_at:manifest.find("\n", args_at)]
        args = [a.encode().decode("unicode_escape") for a in re.findall(r'"((?:[^"\\]|\\.)*)"', line)]
        index = 0
        while index < len(args):
            arg = args[index]
            pair = None
            if arg == "-Xcc" and index + 1 < len(args):
                if args[index + 1] == "-I" and index + 3 < len(args):
                    pair = tuple(args[index:index + 4])
                    index += 4
                else:
                    pair = tuple(args[index:index + 2])
                    index += 2
            elif arg == "-Xfrontend" and index + 1 < len(args):
                pair = tuple(args[index:index + 2])
                index += 2
            elif arg == "-enable-upcoming-feature":
                # Not the package's own stricter settings: a reader's code compiles in plain Swift 6.
                index += 2
                continue
            elif arg in ("-I", "-module-cache-path", "-target", "-swift-version"):
                pair = tuple(args[index:index + 2])
                index += 2
            elif arg.startswith("-D"):
                pair = (arg,)
                index += 1
            else:
                index += 1
                continue
            # The same flags come from every target; keep the first of each, in order (the macro plugin's
            # `-Xfrontend -load-plugin-executable` and `-Xfrontend PATH` stay adjacent: one plugin).
            if pair not in seen:
                seen.add(pair)
                flags.extend(pair)
    return flags


def blocks():
    files = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) + \
        sorted(glob.glob(os.path.join(ROOT, "Sources", "*", "*.docc", "*.md")))
    for path in files:
        text = open(path).read()
        context = "\n".join(match.strip("\n") for match in re.findall(r"<!-- snippet context\n(.*?)-->", text, re.S))
        lines = text.split("\n")
        index = 0
        while index < len(lines):
            stripped = lines[index].strip()
            if stripped.startswith("```swift"):
                indent = len(lines[index]) - len(lines[index].lstrip())
                directive = None
                back = index - 1
                while back >= 0 and lines[back].strip().startswith("<!-- snippet:"):
                    directive = (directive or []) + [lines[back].strip()[len("<!-- snippet:"):-len("-->")].strip()]
                    back -= 1
                body = []
                index += 1
                while index < len(lines) and not lines[index].strip().startswith("```"):
                    body.append(lines[index][indent:] if lines[index][:indent].strip() == "" else lines[index])
                    index += 1
                relative = os.path.relpath(path, ROOT)
                # A catalog's blocks are read with its module in view, as DocC shows them.
                module = relative.split(os.sep)[1] if relative.startswith("Sources" + os.sep) else None
                directives = directive or []
                if context and "alone" not in directives:
                    directives = directives + ["prelude " + context.replace("\n", "; ")]
                yield relative, index - len(body), "\n".join(body), directives, module
            index += 1


def source(body, directives, module):
    prelude, wrapper = [], None
    for directive in directives:
        if directive.startswith("not checked:"):
            return None
        if directive.startswith("prelude "):
            prelude.append(directive[len("prelude "):].replace("; ", "\n"))
        elif directive.startswith("inside "):
            wrapper = directive[len("inside "):]
        elif directive.startswith("generated "):
            hammock = os.path.join(ROOT, ".build", "debug", "hammock")
            generated = subprocess.run([hammock, "generate", "swift", directive[len("generated "):]], cwd=ROOT,
                                       capture_output=True, text=True, check=True).stdout
            prelude.append(generated)
    imports = [line for line in body.split("\n") if line.startswith(("import ", "@testable import ", "public import "))]
    rest = "\n".join(line for line in body.split("\n") if line not in imports)
    if wrapper:
        rest = wrapper.replace("...", "\n" + rest + "\n")
    platform = "#if canImport(FoundationNetworking)\nimport FoundationNetworking\n#endif\n"
    # A block with imports of its own is a whole file and is checked as written (on Linux URLSession's
    # requests need FoundationNetworking: the text must say so). A fragment gets Foundation and its
    # catalog's module.
    complete = bool(imports)
    if module and not complete:
        imports.append(f"import {module}")
    if complete:
        return "\n".join(imports) + "\n" + "\n".join(prelude) + "\n" + rest + "\n"
    return "\n".join(imports) + "\nimport Foundation\n" + platform + "\n".join(prelude) + "\n" + rest + "\n"


def check(item, flags, directory):
    path, line, body, directives, module = item
    text = source(body, directives, module)
    if text is None:
        return path, line, "skipped", ""
    name = re.sub(r"[^A-Za-z0-9]", "_", f"{path}_{line}") + ".swift"
    file = os.path.join(directory, name)
    with open(file, "w") as handle:
        handle.write(text)
    result = subprocess.run(["swiftc", "-typecheck", *flags, file], capture_output=True, text=True)
    errors = "\n".join(l for l in (result.stdout + result.stderr).split("\n") if "error:" in l)
    return path, line, "ok" if result.returncode == 0 else "failed", errors


def typecheck_module(files):
    """Typechecks `files` as one module of an app: no package name, so no `package` declaration of
    Hammock's is visible (scripts/check-generated-clients builds them inside the package, where they are)."""
    result = subprocess.run(["swiftc", "-typecheck", "-parse-as-library" if len(files) == 1 else "-module-name",
                             *([] if len(files) == 1 else ["App"]), *compile_flags(), *files],
                            capture_output=True, text=True)
    errors = "\n".join(l for l in (result.stdout + result.stderr).split("\n") if "error:" in l)
    if result.returncode != 0:
        print(f"snippets: {' '.join(files)}: does not typecheck as an app's code\n{errors}")
    sys.exit(result.returncode and 1)


def main():
    if sys.argv[1:2] == ["--module"]:
        typecheck_module(sys.argv[2:])
    flags = compile_flags()
    items = list(blocks())
    only = sys.argv[1:]
    if only:
        items = [item for item in items if any(item[0].endswith(o) or f"{item[0]}:{item[1]}" == o for o in only)]
    directory = tempfile.mkdtemp(prefix="snippets-")
    failed = skipped = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for path, line, outcome, errors in pool.map(lambda item: check(item, flags, directory), items):
            if outcome == "failed":
                failed += 1
                print(f"snippets: {path}:{line}: does not typecheck\n{errors}")
            elif outcome == "skipped":
                skipped += 1
    checked = len(items) - skipped
    kept = f"; the files are in {directory}" if failed else ""
    if not failed:
        shutil.rmtree(directory, ignore_errors=True)
    print(f"snippets: {checked - failed} of {checked} Swift blocks typecheck ({skipped} marked not checked){kept}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
