"""The audit's source checks: what core's files say, whatever the build graph says.

* Python (ast): core imports no backend package and no vendor module; it loads
  code at run time (importlib, __import__, ctypes) only in an allowlisted
  loader (policy DYNAMIC_LOADERS), and never with a vendor or backend name.
* C/C++: dlopen/dlsym only in an allowlisted loader, no string literal (adjacent
  literals joined, as the compiler does) names a vendor library, and a quoted
  include is resolved against the including file's directory ("../..") and must
  stay inside core.
* BUILD files (and the main-repository .bzl files they load): no label of a
  repository the layer may not reach (load(), deps, select() keys), no vendor
  library or toolkit path in linkopts/copts/includes/defines, no other backend's
  label in a backend, no public target in a backend package.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from pathlib import Path

from torchsplit import vendors
from torchsplit.audit.findings import Finding
from torchsplit.audit.policy import Policy

C_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cuh", ".inl")
_FLAG_ATTRS = {
    "linkopts",
    "copts",
    "conlyopts",
    "cxxopts",
    "includes",
    "defines",
    "local_defines",
    "system_includes",
}
_LOADER_CALLS = {"import_module", "__import__", "CDLL", "PyDLL", "LoadLibrary", "find_library"}
_CTYPES_LOADERS = {"cdll", "pydll"}
_SKIP_DIRS = {"node_modules", ".git", "__pycache__"}


def _walk(root: Path, rel: str, suffixes: tuple[str, ...]) -> Iterator[Path]:
    base = root / rel
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(suffixes):
                yield Path(dirpath) / name


def backend_packages(root: Path) -> dict[str, str]:
    """Python package name -> backend directory (third_device/<backend>/<package>/__init__.py)."""
    out: dict[str, str] = {}
    for backend in sorted((root / "third_device").glob("*/")):
        for init in backend.glob("*/__init__.py"):
            out[init.parent.name] = f"third_device/{backend.name}"
        out.setdefault(backend.name, f"third_device/{backend.name}")
    return out


# -- Python ---------------------------------------------------------------------------
def _fold(node: ast.expr) -> str | None:
    """The value of a string expression made of constants ("a" + "b", f"{'a'}b", "".join([...]))."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _fold(node.left), _fold(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.JoinedStr):
        parts = [_fold(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values]
        return None if None in parts else "".join(p for p in parts if p is not None)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.List | ast.Tuple)
    ):
        sep = _fold(node.func.value)
        items = [_fold(e) for e in node.args[0].elts]
        return None if sep is None or None in items else sep.join(i for i in items if i)
    return None


def _callee(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def check_python(path: Path, rel: str, backends: dict[str, str], loader: bool) -> list[Finding]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), rel)
    except (SyntaxError, UnicodeDecodeError) as exc:
        return [Finding("PYTHON", "core-to-backend", rel, 0, f"cannot parse: {exc}")]
    out: list[Finding] = []

    def named(what: str) -> str | None:
        top = what.split(".", 1)[0]
        if top in backends:
            return f"backend package {top} ({backends[top]})"
        family = vendors.python_module_family(what) or vendors.library_family(what)
        return f"a {family} vendor module or library" if family else None

    for node in ast.walk(tree):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        for module in modules:
            what = named(module)
            if what:
                out.append(
                    Finding(
                        "PYTHON", "core-to-backend", rel, node.lineno, f"imports {module}: {what}"
                    )
                )
        if isinstance(node, ast.Attribute) and node.attr in _CTYPES_LOADERS and not loader:
            if isinstance(node.value, ast.Name) and node.value.id == "ctypes":
                out.append(
                    Finding("PYTHON", "DYNAMIC_LOADERS", rel, node.lineno,
                            f"ctypes.{node.attr} loads a library outside the allowlisted loaders")
                )  # fmt: skip
        if isinstance(node, ast.Call) and _callee(node) in _LOADER_CALLS and node.args:
            name = _callee(node)
            value = _fold(node.args[0])
            if value is not None:
                what = named(value)
                if what:
                    out.append(
                        Finding("PYTHON", "core-to-backend", rel, node.lineno,
                                f"{name}({value!r}) loads {what}")
                    )  # fmt: skip
                    continue
            if not loader:
                arg = "a computed name" if value is None else repr(value)
                out.append(
                    Finding("PYTHON", "DYNAMIC_LOADERS", rel, node.lineno,
                            f"{name}({arg}) outside the allowlisted loaders "
                            "(policy DYNAMIC_LOADERS)")
                )  # fmt: skip
    return out


# -- C/C++ ----------------------------------------------------------------------------
_C_TOKEN = re.compile(
    r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|^[ \t]*#[ \t]*include[^\n]*',
    re.DOTALL | re.MULTILINE,
)
_INCLUDE = re.compile(r'#\s*include\s*"([^"]+)"')
_LOAD_CALL = re.compile(r"\b(dlopen|dlmopen|dlsym|dlvsym)\s*\(")


def _c_scan(text: str) -> tuple[str, list[tuple[int, str]], list[tuple[int, str]]]:
    """(code with comments and literals blanked, joined string literals, quoted includes)."""
    code: list[str] = []
    literals: list[tuple[int, str]] = []
    includes: list[tuple[int, str]] = []
    last = 0
    joinable_end = -1
    for m in _C_TOKEN.finditer(text):
        token = m.group(0)
        line = text.count("\n", 0, m.start()) + 1
        gap = text[last : m.start()]
        code.append(gap)
        if token.startswith('"'):
            value = token[1:-1]
            if literals and joinable_end >= 0 and not gap.strip():
                literals[-1] = (literals[-1][0], literals[-1][1] + value)
            else:
                literals.append((line, value))
            joinable_end = m.end()
            code.append('""')
        elif token.lstrip().startswith("#"):
            inc = _INCLUDE.search(token)
            if inc:
                includes.append((line, inc.group(1)))
            code.append("\n" * token.count("\n"))
        else:
            # A comment between two literals still joins them; keep joinable_end.
            if not token.startswith(("//", "/*")):
                joinable_end = -1
            code.append(" " + "\n" * token.count("\n"))
        last = m.end()
        if not token.startswith(('"', "//", "/*")):
            joinable_end = -1
    code.append(text[last:])
    return "".join(code), literals, includes


def check_c(path: Path, rel: str, root: Path, layer_root: str, loader: bool) -> list[Finding]:
    text = path.read_text(encoding="utf-8", errors="replace")
    code, literals, includes = _c_scan(text)
    out: list[Finding] = []
    if not loader:
        for m in _LOAD_CALL.finditer(code):
            line = code.count("\n", 0, m.start()) + 1
            out.append(
                Finding("SOURCE", "DYNAMIC_LOADERS", rel, line,
                        f"{m.group(1)}() outside the allowlisted loaders (policy DYNAMIC_LOADERS)")
            )  # fmt: skip
    for line, value in literals:
        family = vendors.library_family(value) or vendors.toolkit_path_family(value)
        if family:
            out.append(
                Finding("SOURCE", "core-to-toolkit", rel, line,
                        f"string {value!r} names a {family} vendor library or path")
            )  # fmt: skip
    here = path.parent
    for line, include in includes:
        if ".." not in include.split("/"):
            continue
        target = Path(os.path.normpath(here / include))
        try:
            resolved = target.relative_to(root).as_posix()
        except ValueError:
            resolved = str(target)
        if not (resolved + "/").startswith(layer_root + "/"):
            out.append(
                Finding("INCLUDE", "core-to-backend", rel, line,
                        f'"{include}" resolves to {resolved}, outside //{layer_root}')
            )  # fmt: skip
    return out


# -- BUILD files ----------------------------------------------------------------------
_LABEL_REPO = re.compile(r"^@([\w.-]+)//")


def _strings(node: ast.AST) -> Iterator[tuple[int, str]]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            yield sub.lineno, sub.value


def _select_keys(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """String keys of select() dicts, and load() labels: what a .bzl makes its callers reach."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "select" and node.args and isinstance(node.args[0], ast.Dict):
                for key in node.args[0].keys:
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        yield key.lineno, key.value
    yield from _loads(tree)


def _loads(tree: ast.Module) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "load"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            out.append((node.lineno, str(node.args[0].value)))
    return out


def _bzl_path(label: str, package: str) -> str | None:
    """Workspace-relative path of a main-repository .bzl label, None for another repository."""
    if label.startswith("@"):
        if not label.startswith("@//"):
            return None
        label = label[1:]
    if label.startswith("//"):
        pkg, _, name = label[2:].partition(":")
        return f"{pkg}/{name}" if pkg else name
    return f"{package}/{label.lstrip(':')}"


_GRAPH_CALLS = ("layer_graph_test", "device_backend")


def _after_graph_test(tree: ast.Module, rel: str) -> list[Finding]:
    """Targets declared after layer_graph_test()/device_backend(): outside the graph test's
    scope (a genquery scope cannot be a wildcard), so they must come before it."""
    out: list[Finding] = []
    seen = ""
    for stmt in tree.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
            continue
        if seen and call.func.id != "load":
            out.append(
                Finding("BUILD", "graph-scope", rel, stmt.lineno,
                        f"{call.func.id}() after {seen}(): outside the layering graph test's "
                        f"scope; declare it before {seen}()")
            )  # fmt: skip
        elif call.func.id in _GRAPH_CALLS:
            seen = call.func.id
    return out


def check_build(
    root: Path, package: str, layer: str, allowed: list[str] | None, backend: str | None
) -> list[Finding]:
    out: list[Finding] = []
    for name in ("BUILD.bazel", "BUILD"):
        if (root / package / name).exists():
            build = f"{package}/{name}"
            break
    else:
        return out
    seen: set[str] = set()
    todo = [build]
    while todo:
        rel = todo.pop()
        if rel in seen or not (root / rel).exists():
            continue
        seen.add(rel)
        try:
            tree = ast.parse((root / rel).read_text(encoding="utf-8"), rel)
        except SyntaxError:
            continue  # not Python-compatible Starlark: Bazel's own parse covers it
        via = "" if rel == build else f" (loaded by {build})"
        for _, label in _loads(tree):
            path = _bzl_path(label, package if rel == build else str(Path(rel).parent))
            if path:
                todo.append(path)
        for line, value in _strings(tree) if rel == build else _select_keys(tree):
            repo = _LABEL_REPO.match(value)
            if allowed is not None and repo and repo.group(1) not in allowed:
                out.append(
                    Finding("BUILD", "REPOSITORIES", rel, line,
                            f"{value} is in @{repo.group(1)}, which {layer} may not reach{via}")
                )  # fmt: skip
            if rel != build:
                continue
            if backend and value.startswith("//third_device/"):
                other = value[len("//third_device/") :].split("/")[0].split(":")[0]
                if other != backend:
                    out.append(
                        Finding("BUILD", "backend-to-backend", rel, line,
                                f"{value} is another backend's label")
                    )  # fmt: skip
            if layer == "core" and value.startswith("//third_device"):
                out.append(Finding("BUILD", "core-to-backend", rel, line, f"{value} is a backend"))
            if backend and value == "//visibility:public":
                out.append(
                    Finding("BUILD", "BACKEND_VISIBILITY", rel, line,
                            "a public target in a backend package (declare targets with "
                            "device_backend(), visible per BACKEND_VISIBILITY)")
                )  # fmt: skip
        if rel == build:
            out += _after_graph_test(tree, rel)
        if rel == build and layer == "core":
            for node in ast.walk(tree):
                if isinstance(node, ast.keyword) and node.arg in _FLAG_ATTRS:
                    for line, value in _strings(node.value):
                        family = vendors.text_family(value)
                        if family:
                            out.append(
                                Finding("BUILD", "core-to-toolkit", rel, line,
                                        f"{node.arg} has {value!r}, a {family} library or path")
                            )  # fmt: skip
    return out


# -- driver ---------------------------------------------------------------------------
def check_sources(root: Path, policy: Policy, packages: list[str]) -> list[Finding]:
    """Every source check over the layers the policy guards (core, the backends)."""
    backends = backend_packages(root)
    loaders = set(policy.dynamic_loaders)
    out: list[Finding] = []
    for package in packages:
        if policy.is_exempt("", package):
            continue
        layer = policy.layer_of("", package)
        allowed = policy.repositories.get(layer)
        backend = package.split("/")[1] if layer == "backend" else None
        if layer in ("core", "backend"):
            out += check_build(root, package, layer, allowed, backend)
    core_roots = sorted({p.split("/")[0] for p in packages if policy.layer_of("", p) == "core"})
    for top in core_roots:
        for path in _walk(root, top, (".py", *C_SUFFIXES)):
            rel = path.relative_to(root).as_posix()
            if path.suffix == ".py":
                out += check_python(path, rel, backends, rel in loaders)
            else:
                out += check_c(path, rel, root, top, rel in loaders)
    return out
