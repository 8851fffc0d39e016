"""The audit's source checks: what the files of core and of every backend say, whatever
the build graph says. Each layer is checked against every other (layers.py):

* Python (ast): no import of another layer's package (a backend's, from core or another
  backend) or of a vendor module not of the layer's own toolkit, static, inside a
  function or by a computed name (constant expressions are folded); core loads code at
  run time (importlib, __import__, ctypes) only in an allowlisted loader (policy
  DYNAMIC_LOADERS); no launch of a vendor command-line tool (subprocess, os.system,
  os.exec*, shutil.which...) and no read of a vendor environment variable (os.environ,
  os.getenv) of a foreign toolkit.
* C/C++: dlopen/dlsym only in an allowlisted loader (core); no string literal (adjacent
  literals joined, as the compiler does) names a foreign vendor library or toolkit path,
  another backend (its directory, Python package or extension: ``dlopen("_EMUC.so")``),
  a foreign vendor tool (``popen("nvidia-smi")``) or environment variable
  (``getenv("NVIDIA_VISIBLE_DEVICES")``); a quoted include is resolved against the
  including file's directory ("../..") and must stay in the layer (or core).
* BUILD files (and the main-repository .bzl files they load): no label of a repository
  the layer may not reach (load(), deps, select() keys), no foreign vendor library or
  toolkit path in linkopts/copts/includes/defines, no other backend's label in a
  backend (a derived backend may name its parent's source files: DERIVED_BACKENDS), no
  public target in a backend package, no device source (.cu) named in core.
* Core's tree holds no device source file (.cu, .cuh...: DEVICE_SOURCE_SUFFIXES).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from torchsplit import vendors
from torchsplit.audit.findings import Finding
from torchsplit.audit.layers import Break, Layer, Layers
from torchsplit.audit.policy import Policy

C_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cu", ".cuh", ".hip", ".inl")
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
# Calls that start a process: (module, function) pairs; the command is their first
# string argument, or the first element of their first list argument.
_LAUNCHERS = {
    "subprocess": {
        "run",
        "call",
        "check_call",
        "check_output",
        "Popen",
        "getoutput",
        "getstatusoutput",
    },
    "os": {
        "system",
        "popen",
        "execl",
        "execle",
        "execlp",
        "execlpe",
        "execv",
        "execve",
        "execvp",
        "execvpe",
        "spawnl",
        "spawnle",
        "spawnlp",
        "spawnlpe",
        "spawnv",
        "spawnve",
        "spawnvp",
        "spawnvpe",
        "posix_spawn",
        "posix_spawnp",
    },
    "shutil": {"which"},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
}
_ENV_CALLS = {"getenv", "putenv", "unsetenv"}
_ENV_METHODS = {"get", "setdefault", "pop", "__getitem__", "__contains__"}
_SKIP_DIRS = {"node_modules", ".git", "__pycache__"}


def _walk(root: Path, rel: str, suffixes: tuple[str, ...]) -> Iterator[Path]:
    base = root / rel
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(suffixes):
                yield Path(dirpath) / name


def _finding(kind: str, rel: str, line: int, why: Break, message: str) -> Finding:
    return Finding(kind, why.rule, rel, line, message, why.pair)


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


def _callee(node: ast.Call) -> tuple[str, str]:
    """(qualifier, name) of a call: ``subprocess.run`` -> ("subprocess", "run")."""
    func = node.func
    if isinstance(func, ast.Name):
        return "", func.id
    if isinstance(func, ast.Attribute):
        base = func.value
        if isinstance(base, ast.Name):
            return base.id, func.attr
        if isinstance(base, ast.Attribute):
            return base.attr, func.attr
        return "", func.attr
    return "", ""


def _is_environ(node: ast.expr) -> bool:
    """``os.environ`` / ``os.environb`` / a bare ``environ`` (from os import environ)."""
    if isinstance(node, ast.Attribute) and node.attr in ("environ", "environb"):
        return isinstance(node.value, ast.Name) and node.value.id == "os"
    return isinstance(node, ast.Name) and node.id == "environ"


def _command(node: ast.Call) -> str | None:
    """The command a launching call runs: its first string (or list's first element)."""
    for arg in node.args:
        if isinstance(arg, ast.List | ast.Tuple) and arg.elts:
            arg = arg.elts[0]
        value = _fold(arg)
        if value is not None:
            return value
    return None


class _PythonChecker:
    def __init__(self, rel: str, layer: Layer, layers: Layers, loader: bool) -> None:
        self.rel = rel
        self.layer = layer
        self.layers = layers
        self.loader = loader
        self.out: list[Finding] = []
        self.reported: set[tuple[int, str]] = set()

    def add(self, line: int, why: Break | None, message: str, key: str = "") -> None:
        if why is None or (line, key or message) in self.reported:
            return
        self.reported.add((line, key or message))
        self.out.append(_finding("PYTHON", self.rel, line, why, message))

    def named(self, what: str) -> tuple[Break, str] | None:
        """A module or library name that couples this layer to another."""
        other = self.layers.backend_of_module(what)
        if other:
            why = self.layer.backend_break(other)
            return (why, f"backend package {other}") if why else None
        family = vendors.python_module_family(what) or vendors.library_family(what)
        if family:
            why = self.layer.vendor_break(family)
            return (why, f"a {family} vendor module or library") if why else None
        if self.layer.kind == "backend":
            for backend, name in self.layers.backends_named_in(what, but=self.layer.name):
                why = self.layer.backend_break(backend)
                if why:
                    return why, f"{name}, a file of backend {backend}"
        return None

    def string(self, line: int, value: str, context: str = "") -> None:
        """A string that is a vendor environment variable's name or a vendor tool."""
        family = vendors.env_family(value)
        if family:
            how = f" ({context})" if context else ""
            self.add(line, self.layer.vendor_break(family),
                     f"{value} is a {family} environment variable{how}", key=value)  # fmt: skip
            return
        tool = vendors.tool_family(value)
        if tool and (context or value == tool[1]):
            how = f"{context} launches" if context else "names"
            self.add(line, self.layer.vendor_break(tool[0]),
                     f"{how} {tool[1]}, a {tool[0]} command-line tool", key=value)  # fmt: skip

    def check(self, tree: ast.Module) -> list[Finding]:
        for node in ast.walk(tree):
            self.node(node)
        return self.out

    def node(self, node: ast.AST) -> None:
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        for module in modules:
            hit = self.named(module)
            if hit:
                self.add(node.lineno, hit[0], f"imports {module}: {hit[1]}")
        if isinstance(node, ast.Attribute) and node.attr in _CTYPES_LOADERS:
            if self.layer.kind == "core" and not self.loader:
                if isinstance(node.value, ast.Name) and node.value.id == "ctypes":
                    what = f"ctypes.{node.attr} loads a library outside the allowlisted loaders"
                    self.add(node.lineno, Break("DYNAMIC_LOADERS", "core -> any library"), what)
        if isinstance(node, ast.Subscript) and _is_environ(node.value):
            key = _fold(node.slice)
            if key is not None:
                self.string(node.lineno, key, "os.environ[...]")
        if isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
            key = _fold(node.left)
            if key is not None:
                self.string(node.lineno, key, "in os.environ")
        if isinstance(node, ast.Call):
            self.call(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            self.string(node.lineno, node.value)

    def call(self, node: ast.Call) -> None:
        qualifier, name = _callee(node)
        if name in _LOADER_CALLS and node.args:
            value = _fold(node.args[0])
            hit = self.named(value) if value is not None else None
            if hit:
                self.add(node.lineno, hit[0], f"{name}({value!r}) loads {hit[1]}")
                return
            if self.layer.kind == "core" and not self.loader:
                arg = "a computed name" if value is None else repr(value)
                what = f"{name}({arg}) outside the allowlisted loaders (policy DYNAMIC_LOADERS)"
                self.add(node.lineno, Break("DYNAMIC_LOADERS", "core -> any module"), what)
        if name in _LAUNCHERS.get(qualifier, ()) or (not qualifier and name == "which"):
            command = _command(node)
            if command is not None:
                self.string(node.lineno, command, f"{qualifier or 'shutil'}.{name}")
        env_call = (qualifier == "os" and name in _ENV_CALLS) or (
            isinstance(node.func, ast.Attribute)
            and _is_environ(node.func.value)
            and name in _ENV_METHODS
        )
        if env_call and node.args:
            key = _fold(node.args[0])
            if key is not None:
                self.string(node.lineno, key, f"{qualifier}.{name}" if qualifier else name)


def check_python(path: Path, rel: str, layer: Layer, layers: Layers, loader: bool) -> list[Finding]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), rel)
    except (SyntaxError, UnicodeDecodeError) as exc:
        return [Finding("PYTHON", "parse", rel, 0, f"cannot parse: {exc}")]
    return _PythonChecker(rel, layer, layers, loader).check(tree)


# -- C/C++ ----------------------------------------------------------------------------
_C_TOKEN = re.compile(
    r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|^[ \t]*#[ \t]*include[^\n]*',
    re.DOTALL | re.MULTILINE,
)
_INCLUDE = re.compile(r'#\s*include\s*"([^"]+)"')
_LOAD_CALL = re.compile(r"\b(dlopen|dlmopen|dlsym|dlvsym)\s*\(")
# Calls whose string arguments name an environment variable or a command to run.
_PROCESS_CALL = re.compile(
    r"\b(getenv|secure_getenv|setenv|putenv|unsetenv|popen|system|execl|execlp|execle|execv|"
    r"execvp|execvpe|posix_spawn|posix_spawnp|LoadLibrary[AW]?|dlopen)\s*\("
)


def _blank(token: str) -> str:
    return re.sub(r"[^\n]", " ", token)


def _c_scan(text: str) -> tuple[str, list[tuple[int, int, str]], list[tuple[int, str]]]:
    """(code with comments and literals blanked, offsets kept; joined string literals as
    (offset, line, value); quoted includes)."""
    code: list[str] = []
    literals: list[tuple[int, int, str]] = []
    includes: list[tuple[int, str]] = []
    last = 0
    joinable = False
    for m in _C_TOKEN.finditer(text):
        token = m.group(0)
        line = text.count("\n", 0, m.start()) + 1
        gap = text[last : m.start()]
        code.append(gap)
        if gap.strip():
            joinable = False
        if token.startswith('"'):
            value = token[1:-1]
            if literals and joinable:
                offset, first, before = literals[-1]
                literals[-1] = (offset, first, before + value)
            else:
                literals.append((m.start(), line, value))
            joinable = True
            code.append('"' + _blank(token[1:-1]) + '"')
        elif token.lstrip().startswith("#"):
            inc = _INCLUDE.search(token)
            if inc:
                includes.append((line, inc.group(1)))
            code.append(_blank(token))
            joinable = False
        else:
            # A comment between two literals still joins them.
            if not token.startswith(("//", "/*")):
                joinable = False
            code.append(_blank(token))
        last = m.end()
    code.append(text[last:])
    return "".join(code), literals, includes


def _call_spans(code: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of every process/environment call's argument list."""
    spans = []
    for m in _PROCESS_CALL.finditer(code):
        depth, i = 1, m.end()
        while i < len(code) and depth:
            depth += {"(": 1, ")": -1}.get(code[i], 0)
            i += 1
        spans.append((m.end(), i, m.group(1)))
    return spans


def check_c(
    path: Path, rel: str, root: Path, layer: Layer, layers: Layers, loader: bool
) -> list[Finding]:
    text = path.read_text(encoding="utf-8", errors="replace")
    code, literals, includes = _c_scan(text)
    out: list[Finding] = []
    if layer.kind == "core" and not loader:
        for m in _LOAD_CALL.finditer(code):
            line = code.count("\n", 0, m.start()) + 1
            out.append(
                _finding("SOURCE", rel, line, Break("DYNAMIC_LOADERS", "core -> any library"),
                         f"{m.group(1)}() outside the allowlisted loaders (policy DYNAMIC_LOADERS)")
            )  # fmt: skip
    spans = _call_spans(code) if literals else []
    for offset, line, value in literals:
        call = next((name for start, end, name in spans if start <= offset < end), "")
        out += _c_literal(rel, line, value, call, layer, layers)
    here = path.parent
    allowed = [layer.root, *layers.core_roots]
    for line, include in includes:
        if ".." not in include.split("/"):
            continue
        target = Path(os.path.normpath(here / include))
        try:
            resolved = target.relative_to(root).as_posix()
        except ValueError:
            resolved = str(target)
        if any((resolved + "/").startswith(r + "/") for r in allowed):
            continue
        other = layers.layer(resolved)
        why = (
            layer.backend_break(other.name)
            if other is not None and other.kind == "backend"
            else Break(f"{layer.kind}-include", f"{layer.name} -> outside its layer")
        )
        if why:
            out.append(
                _finding("INCLUDE", rel, line, why,
                         f'"{include}" resolves to {resolved}, outside //{layer.root}')
            )  # fmt: skip
    return out


def _c_literal(
    rel: str, line: int, value: str, call: str, layer: Layer, layers: Layers
) -> list[Finding]:
    """A string literal (adjacent ones joined) naming another layer, with the call it is in."""
    said = f"string {value!r}" + (f" (in a {call}() call)" if call else "")
    found: list[tuple[Break | None, str]] = []
    family = vendors.library_family(value) or vendors.toolkit_path_family(value)
    if family:
        found.append((layer.vendor_break(family), f"names a {family} vendor library or path"))
    family = vendors.env_family(value)
    if family:
        found.append((layer.vendor_break(family), f"is a {family} environment variable"))
    tool = vendors.tool_family(value)
    if tool and (call or value == tool[1]):
        found.append(
            (layer.vendor_break(tool[0]), f"runs {tool[1]}, a {tool[0]} command-line tool")
        )
    but = layer.name if layer.kind == "backend" else None
    for backend, name in layers.backends_named_in(value, but=but):
        found.append((layer.backend_break(backend), f"names {name}, of backend {backend}"))
    for why, what in found:
        if why:
            return [_finding("SOURCE", rel, line, why, f"{said} {what}")]
    return []


# -- BUILD files ----------------------------------------------------------------------
_LABEL_REPO = re.compile(r"^@([\w.-]+)//")


def _strings(node: ast.AST) -> Iterator[tuple[int, str]]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            yield sub.lineno, sub.value


@dataclass
class _Facts:
    """What the checks read of one BUILD or .bzl file, from one walk of its syntax tree."""

    tree: ast.Module
    loads: list[tuple[int, str]] = field(default_factory=list)  # load() labels
    strings: list[tuple[int, str]] = field(default_factory=list)  # every string constant
    select_keys: list[tuple[int, str]] = field(default_factory=list)  # select() dict keys
    flags: list[tuple[str, int, str]] = field(default_factory=list)  # (attribute, line, string)


def _facts(root: Path, rel: str, cache: dict[str, _Facts | None]) -> _Facts | None:
    """The facts of a file, parsed once per check_sources() (core's and every backend's BUILD
    files load the same .bzl files); None when missing or not Python-compatible Starlark
    (Bazel's own parse reports that)."""
    if rel not in cache:
        try:
            tree = ast.parse((root / rel).read_text(encoding="utf-8"), rel)
        except (OSError, SyntaxError, UnicodeDecodeError):
            cache[rel] = None
            return None
        facts = _Facts(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                facts.strings.append((node.lineno, node.value))
            elif isinstance(node, ast.keyword) and node.arg in _FLAG_ATTRS:
                facts.flags += [(node.arg, line, value) for line, value in _strings(node.value)]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
                first = node.args[0]
                if node.func.id == "load" and isinstance(first, ast.Constant):
                    facts.loads.append((node.lineno, str(first.value)))
                elif node.func.id == "select" and isinstance(first, ast.Dict):
                    for key in first.keys:
                        if isinstance(key, ast.Constant) and isinstance(key.value, str):
                            facts.select_keys.append((key.lineno, key.value))
        cache[rel] = facts
    return cache[rel]


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


def _after_graph_test(tree: ast.Module, rel: str, layer: str) -> list[Finding]:
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
                        f"scope; declare it before {seen}()", f"{layer} -> any layer")
            )  # fmt: skip
        elif call.func.id in _GRAPH_CALLS:
            seen = call.func.id
    return out


def _translation_read(root: Path, policy: Policy, backend: str, label: str) -> bool:
    """A derived backend naming a *source file* of its parent (DERIVED_BACKENDS)."""
    derived = policy.derived.get(backend)
    if derived is None:
        return False
    package, _, name = label[2:].partition(":")
    parent = f"third_device/{derived.parent}"
    if not (package + "/").startswith(parent + "/") or not name:
        return False
    return (root / package / name).is_file()


def check_build(
    root: Path,
    package: str,
    layer: Layer,
    policy: Policy,
    shared: frozenset[str] = frozenset(),
    cache: dict[str, _Facts | None] | None = None,
) -> list[Finding]:
    """One BUILD file and the main-repository .bzl files it loads (``shared``: those a
    backend's BUILD file loads too)."""
    cache = {} if cache is None else cache
    out: list[Finding] = []
    for name in ("BUILD.bazel", "BUILD"):
        if (root / package / name).exists():
            build = f"{package}/{name}"
            break
    else:
        return out
    allowed = policy.allowed_repositories(package)
    seen: set[str] = set()
    todo = [build]
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        facts = _facts(root, rel, cache)
        if facts is None:
            continue
        via = "" if rel == build else f" (loaded by {build})"
        for _, label in facts.loads:
            path = _bzl_path(label, package if rel == build else str(Path(rel).parent))
            if path:
                todo.append(path)
        # What a .bzl makes its callers reach: its select() keys and its loads.
        for line, value in facts.strings if rel == build else facts.select_keys + facts.loads:
            repo = _LABEL_REPO.match(value)
            if allowed is not None and repo and repo.group(1) not in allowed:
                out.append(
                    Finding("BUILD", "REPOSITORIES", rel, line,
                            f"{value} is in @{repo.group(1)}, which {layer.name} may not reach"
                            f"{via}", f"{layer.name} -> @{repo.group(1)}")
                )  # fmt: skip
            if rel != build:
                continue
            out += _build_string(root, policy, layer, rel, line, value)
        if rel != build and layer.kind == "core" and rel not in shared:
            # A source list only core loads (build_variables.bzl); one a backend loads
            # too (an overlay's build_variables_split.bzl) lists device sources for it.
            for line, value in facts.strings:
                if not value.startswith(".") and _device_suffix(policy, value):
                    out.append(
                        Finding("BUILD", "core-device-source", rel, line,
                                f"{value!r} is a device source ({_device_suffix(policy, value)}, "
                                f"DEVICE_SOURCE_SUFFIXES): core compiles for the CPU only{via}",
                                "core -> a device compiler")
                    )  # fmt: skip
        if rel == build:
            out += _after_graph_test(facts.tree, rel, layer.name)
            out += _build_flags(facts, rel, layer)
    return out


def _build_string(
    root: Path, policy: Policy, layer: Layer, rel: str, line: int, value: str
) -> list[Finding]:
    """One string of a core or backend BUILD file."""
    out = []
    if value.startswith("//third_device/"):
        other = value[len("//third_device/") :].split("/")[0].split(":")[0]
        why = layer.backend_break(other)
        derived = policy.derived.get(other)
        if value.endswith((":__pkg__", ":__subpackages__")):
            # Visibility granted to another backend: only a parent to its derived backend
            # (for the sources the translation reads).
            if why and not (derived is not None and derived.parent == layer.name):
                what = f"{value} grants visibility to another backend"
                out.append(Finding("BUILD", why.rule, rel, line, what, why.pair))
        elif why and not (
            layer.kind == "backend" and _translation_read(root, policy, layer.name, value)
        ):
            whose = "another backend" if layer.kind == "backend" else "a backend"
            what = f"{value} is {whose}'s label"
            out.append(Finding("BUILD", why.rule, rel, line, what, why.pair))
    if layer.kind == "backend" and value == "//visibility:public":
        out.append(
            Finding("BUILD", "BACKEND_VISIBILITY", rel, line,
                    "a public target in a backend package (declare targets with "
                    "device_backend(), visible per BACKEND_VISIBILITY)",
                    f"{layer.name} -> every layer")
        )  # fmt: skip
    if layer.kind == "core":
        suffix = _device_suffix(policy, value)
        if suffix and not value.startswith("."):
            out.append(
                Finding("BUILD", "core-device-source", rel, line,
                        f"{value!r} is a device source ({suffix}, DEVICE_SOURCE_SUFFIXES): "
                        "core compiles for the CPU only", "core -> a device compiler")
            )  # fmt: skip
    return out


def _direct_loads(root: Path, package: str, cache: dict[str, _Facts | None]) -> list[str]:
    """The main-repository .bzl files a package's BUILD file loads."""
    for name in ("BUILD.bazel", "BUILD"):
        if (root / package / name).exists():
            facts = _facts(root, f"{package}/{name}", cache)
            loads = facts.loads if facts else []
            return [p for _, label in loads if (p := _bzl_path(label, package))]
    return []


def _device_suffix(policy: Policy, value: str) -> str | None:
    return next((s for s in policy.device_suffixes if value.endswith(s)), None)


def _build_flags(facts: _Facts, rel: str, layer: Layer) -> list[Finding]:
    out = []
    for attr, line, value in facts.flags:
        family = vendors.text_family(value)
        why = layer.vendor_break(family) if family else None
        if why:
            what = f"{attr} has {value!r}, a {family} library or path"
            out.append(Finding("BUILD", why.rule, rel, line, what, why.pair))
    return out


# -- driver ---------------------------------------------------------------------------
def check_sources(root: Path, policy: Policy, packages: list[str]) -> list[Finding]:
    """Every source check over the layers the policy guards (core, every backend)."""
    layers = Layers.of(root, policy, packages)
    loaders = set(policy.dynamic_loaders)
    out: list[Finding] = []
    guarded = [
        (package, layer)
        for package in packages
        if package and not policy.is_exempt("", package)
        for layer in [layers.layer(f"{package}/BUILD")]
        if layer is not None
    ]
    cache: dict[str, _Facts | None] = {}
    shared = frozenset(
        path
        for package, layer in guarded
        if layer.kind == "backend"
        for path in _direct_loads(root, package, cache)
    )
    for package, layer in guarded:
        out += check_build(root, package, layer, policy, shared, cache)
    for top, layer in layers.roots():
        for path in _walk(root, top, (".py", *C_SUFFIXES, *policy.device_suffixes)):
            rel = path.relative_to(root).as_posix()
            if layer.kind == "core" and layers.exempt(rel):
                continue  # an exempt package inside core's tree (//c10/test/...: tests)
            if layer.kind == "core":
                suffix = _device_suffix(policy, rel)
                if suffix:
                    out.append(
                        Finding("SOURCE", "core-device-source", rel, 0,
                                f"a device source ({suffix}, DEVICE_SOURCE_SUFFIXES) under "
                                "core: it belongs to a backend", "core -> a device compiler")
                    )  # fmt: skip
            if path.suffix == ".py":
                out += check_python(path, rel, layer, layers, rel in loaders)
            elif path.suffix in C_SUFFIXES or path.name.endswith(C_SUFFIXES):
                out += check_c(path, rel, root, layer, layers, rel in loaders)
    return out
