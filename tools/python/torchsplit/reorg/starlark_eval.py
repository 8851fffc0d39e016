"""Evaluate a PyTorch-style ``build_variables.bzl`` with a real Starlark interpreter.

The file is parsed and run by ``starlark-pyo3`` (starlark-rust); Python never
``exec``s or ``eval``s it. What upstream PyTorch uses is supported: ``def`` with default
arguments, comprehensions with ``str.format``, ``sorted(a + b,)``, ``+`` between
literals and names, ``.extend()`` on locals, plain aliases, top-level comprehensions.

Older upstream versions call Buck/Bazel built-ins inside functions. They are stubbed:

* ``native.read_config(section, key, default=None)`` returns the value given with
  ``config_values[(section, key)]`` (CLI: ``--config-value section.key=value``), else
  ``default``. Every call is recorded.
* ``native.glob(include, exclude=[], **kwargs)`` returns ``[]`` unless a ``glob_root``
  directory is given, in which case the patterns are expanded there (``**`` recurses),
  minus ``exclude``, sorted. Every call is recorded.

Every top-level name bound to a list of strings becomes a source list. Every top-level
function that can be called without arguments (all parameters have defaults) is called
and its result, when a list of strings, becomes a list named ``name()``. Functions that
need arguments are reported as skipped.

A second, purely textual pass maps every string literal to the top-level definition it
is written in, so a reviewer gets file:line for each source and the tool can tell the
list a file is *defined* in (its "home") from the aggregates that merely include it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import starlark as sl

from torchsplit.errors import TorchsplitError

# One line of prelude is prepended to the user's file; error lines are shifted back.
_PRELUDE = "native = struct(read_config = __ts_read_config, glob = __ts_glob)\n"
_PRELUDE_LINES = 1

_TOP_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?:\+=|=(?!=))")
_TOP_DEF = re.compile(r"^def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_TOP_STMT = re.compile(r"^[A-Za-z_@]")
_LOCATION = re.compile(r"-->\s*(?P<file>[^\n]*?):(?P<line>\d+):(?P<col>\d+)")
_LITERAL_OR_COMMENT = re.compile(r'"((?:[^"\\\n]|\\.)*)"' r"|'((?:[^'\\\n]|\\.)*)'" r"|(#.*)")


@dataclass(frozen=True)
class StubCall:
    """One call of a stubbed built-in (``native.read_config`` or ``native.glob``)."""

    function: str
    arguments: str
    result: str


@dataclass(frozen=True)
class Literal:
    """Where a string literal is written: its line and the top-level definition around it."""

    line: int
    region: str


@dataclass
class Evaluation:
    """The lists a ``build_variables.bzl`` defines, with where each one comes from."""

    path: str
    lists: dict[str, list[str]] = field(default_factory=dict)
    list_lines: dict[str, int] = field(default_factory=dict)
    skipped_functions: dict[str, str] = field(default_factory=dict)
    ignored_globals: dict[str, str] = field(default_factory=dict)
    stub_calls: list[StubCall] = field(default_factory=list)
    literals: dict[str, list[Literal]] = field(default_factory=dict)
    line_count: int = 0

    def merge(self, other: Evaluation) -> None:
        """Adds another file's lists (e.g. a backend's own build_variables.bzl).

        Line numbers stay those of the file that defines each list.
        """
        clash = sorted(set(self.lists) & set(other.lists))
        if clash:
            raise TorchsplitError(
                f"list(s) {', '.join(clash)} also defined in {other.path}", path=self.path
            )
        self.lists.update(other.lists)
        self.list_lines.update(other.list_lines)
        self.skipped_functions.update(
            {f"{other.path}:{k}": v for k, v in other.skipped_functions.items()}
        )
        self.ignored_globals.update(other.ignored_globals)
        self.stub_calls.extend(other.stub_calls)
        for value, where in other.literals.items():
            self.literals.setdefault(value, []).extend(where)

    def home_of(self, source: str) -> list[Literal]:
        """Literals that spell ``source`` (or are embedded in it, e.g. a formatted label)."""
        found = self.literals.get(source)
        if found:
            return found
        best: list[Literal] = []
        best_len = 0
        for text, where in self.literals.items():
            if len(text) > best_len and len(text) >= 5 and text in source:
                best, best_len = where, len(text)
        return best


def _list_name_for_region(region: str, functions: set[str]) -> str:
    return f"{region}()" if region in functions else region


def _scan_top_level(text: str) -> tuple[list[tuple[int, str, str]], dict[str, list[Literal]]]:
    """Top-level statements ``(line, kind, name)`` and literal occurrences per region."""
    statements: list[tuple[int, str, str]] = []
    literals: dict[str, list[Literal]] = {}
    region = ""
    for number, line in enumerate(text.splitlines(), start=1):
        if _TOP_STMT.match(line):
            match = _TOP_DEF.match(line)
            if match:
                region = match.group(1)
                statements.append((number, "def", region))
            else:
                match = _TOP_ASSIGN.match(line)
                region = match.group(1) if match else ""
                if match:
                    statements.append((number, "assign", region))
        for lit in _LITERAL_OR_COMMENT.finditer(line):
            if lit.group(3) is not None:
                break
            value = lit.group(1) if lit.group(1) is not None else lit.group(2)
            if region and value:
                literals.setdefault(value, []).append(Literal(number, region))
    return statements, literals


def _glob_expand(root: Path, include: list[str], exclude: list[str]) -> list[str]:
    excluded: set[str] = set()
    for pattern in exclude:
        excluded.update(str(p.relative_to(root)) for p in root.glob(pattern) if p.is_file())
    found: set[str] = set()
    for pattern in include:
        found.update(str(p.relative_to(root)) for p in root.glob(pattern) if p.is_file())
    return sorted(found - excluded)


def _error_from_starlark(exc: Exception, path: str, source_lines: list[str]) -> TorchsplitError:
    message = str(exc)
    problem = ""
    for raw in message.splitlines():
        stripped = raw.strip()
        if stripped.startswith("error:"):
            problem = stripped[len("error:") :].strip()
            break
    if not problem:
        problem = message.strip().splitlines()[0] if message.strip() else type(exc).__name__
    locations = [m for m in _LOCATION.finditer(message)]
    line: int | None = None
    col = 0
    if locations:
        last = locations[-1]
        line = int(last.group("line")) - _PRELUDE_LINES
        col = int(last.group("col"))
        if line < 1:
            line = None
    hint = ""
    if line is not None and 0 < line <= len(source_lines):
        hint = f"\n    {source_lines[line - 1].rstrip()}\n    {' ' * max(col - 1, 0)}^"
    expected = (
        "expected valid Starlark as used by PyTorch's build_variables.bzl "
        "(lists of strings, +, sorted(), str.format comprehensions, def with defaults)"
    )
    return TorchsplitError(f"{problem} ({expected}){hint}", path=path, line=line)


def _as_string_list(value: Any) -> list[str] | None:
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def evaluate(
    path: str | Path,
    *,
    display_name: str | None = None,
    config_values: dict[tuple[str, str], str] | None = None,
    glob_root: str | Path | None = None,
) -> Evaluation:
    """Evaluate ``path`` and return every list of strings it defines (see module doc)."""
    file_path = Path(path)
    name = display_name or str(path)
    try:
        text = file_path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise TorchsplitError("no such file (expected a build_variables.bzl)", path=name) from exc
    except IsADirectoryError as exc:
        raise TorchsplitError("is a directory (expected a build_variables.bzl)", path=name) from exc
    except OSError as exc:
        raise TorchsplitError(f"cannot read: {exc.strerror or exc}", path=name) from exc
    except UnicodeDecodeError as exc:
        raise TorchsplitError(f"not UTF-8 text: {exc}", path=name) from exc
    return evaluate_text(text, name=name, config_values=config_values or {}, glob_root=glob_root)


def evaluate_text(
    text: str,
    *,
    name: str,
    config_values: dict[tuple[str, str], str] | None = None,
    glob_root: str | Path | None = None,
) -> Evaluation:
    """Evaluate Starlark source ``text`` (reported as file ``name``)."""
    source_lines = text.splitlines()
    config = config_values or {}
    result = Evaluation(path=name, line_count=len(source_lines))
    root = Path(glob_root) if glob_root is not None else None

    def read_config(section: str, key: str, default: Any = None) -> Any:
        value = config.get((section, key), default)
        result.stub_calls.append(
            StubCall("native.read_config", f"{section!r}, {key!r}, {default!r}", repr(value))
        )
        return value

    def glob(include: list[str], exclude: list[str] | None = None, **_: Any) -> list[str]:
        inc = list(include or [])
        exc = list(exclude or [])
        files = _glob_expand(root, inc, exc) if root is not None else []
        result.stub_calls.append(
            StubCall("native.glob", f"{inc!r}, exclude={exc!r}", f"{len(files)} files")
        )
        return files

    dialect = sl.Dialect.extended()
    dialect.enable_load = False
    globals_ = sl.Globals.extended_by([sl.LibraryExtension.StructType])
    module = sl.Module()
    module.add_callable("__ts_read_config", read_config)
    module.add_callable("__ts_glob", glob)
    try:
        ast = sl.parse(name, _PRELUDE + text, dialect)
        sl.eval(module, ast, globals_)
    except sl.StarlarkError as exc:
        raise _error_from_starlark(exc, name, source_lines) from exc

    statements, literals = _scan_top_level(text)
    functions = {stmt_name for _, kind, stmt_name in statements if kind == "def"}
    # Keep literal regions named like the lists they feed (function regions get "()").
    result.literals = {
        value: [Literal(lit.line, _list_name_for_region(lit.region, functions)) for lit in where]
        for value, where in literals.items()
    }

    first_line: dict[str, tuple[int, str]] = {}
    for line, kind, stmt_name in statements:
        first_line.setdefault(stmt_name, (line, kind))

    ordered = sorted(first_line.items(), key=lambda item: item[1][0])
    values_by_name: dict[str, tuple[int, list[str]]] = {}
    for stmt_name, (line, kind) in ordered:
        if kind == "def":
            continue
        try:
            value = module[stmt_name]
        except (sl.StarlarkError, KeyError):
            result.ignored_globals[stmt_name] = "value cannot be converted"
            continue
        values = _as_string_list(value)
        if values is None:
            result.ignored_globals[stmt_name] = f"{type(value).__name__}, not a list of strings"
            continue
        values_by_name[stmt_name] = (line, values)

    frozen = module.freeze() if functions else None
    for stmt_name, (line, kind) in ordered:
        if kind != "def" or frozen is None:
            continue
        if stmt_name.startswith("_"):
            result.skipped_functions[stmt_name] = "private helper (not exported by Starlark)"
            continue
        try:
            value = frozen.call(stmt_name)
        except sl.StarlarkError as exc:
            if "Missing parameter" in str(exc):
                result.skipped_functions[stmt_name] = (
                    "needs arguments (only functions whose parameters all have defaults "
                    "are evaluated)"
                )
                continue
            raise _error_from_starlark(exc, name, source_lines) from exc
        values = _as_string_list(value)
        if values is None:
            result.skipped_functions[stmt_name] = (
                f"returns {type(value).__name__}, not a list of strings"
            )
            continue
        values_by_name[f"{stmt_name}()"] = (line, values)

    for list_name, (line, values) in sorted(values_by_name.items(), key=lambda i: (i[1][0], i[0])):
        result.lists[list_name] = values
        result.list_lines[list_name] = line
    return result
