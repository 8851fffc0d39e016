"""Find GPU-vendor couplings (CUDA and ROCm/HIP) inside C/C++/CUDA/Python source files.

Each finding has a file, line, column, one or more categories and the vendor
families it belongs to ("cuda", "rocm": see :mod:`torchsplit.vendors`). Categories:

=====================  ==============================================================
use-cuda-guard         a conditional on a build flag (USE_CUDA, USE_ROCM, CUDA_VERSION...)
cuda-compiler-macro    ``__CUDACC__``/``__CUDA_ARCH__``/``__NVCC__``/``__HIPCC__``/``__HIP__``...
cuda-api-macro         torch's own macro around a vendor (``TORCH_CUDA_CPP_API``,
                       ``C10_CUDA_CHECK``, ``MIOPEN_CHECK``, ``CUDABLAS_GEMM_ARGTYPES(...)``)
vendor-api             the vendor's API: C names (``cudaStream_t``, ``cuInit``, ``hipMalloc``),
                       SDK macros and constants (``CUTLASS_HOST_DEVICE``, ``HIP_R_32F``),
                       SDK namespaces (``cutlass::``, ``thrust::``)
vendor-setting         torch's per-vendor state and settings (``userEnabledCuDNN()``,
                       ``allowTF32CuBLAS()``, ``Float32Backend::CUDA``, ``_set_cudnn_enabled``)
is-cuda                ``.is_cuda()`` / ``.is_hip()`` tests
device-type-cuda       ``kCUDA``, ``DeviceType::HIP``, ``DispatchKey::SparseCUDA``,
                       ``BackendComponent::CUDABit``, Python ``DispatchKey.AutogradCUDA``
cuda-device-string     a device string literal ``"cuda"``, ``"cuda:1"``, ``f"cuda:{rank}"``
dlopen                 a string naming a vendor shared library (``"libcuda.so.1"``)
cuda-include           ``#include`` of a vendor SDK header (cuda_runtime.h, hip/..., nvml.h)
backend-include        ``#include`` of a torch backend header that moves (``ATen/cuda/...``,
                       ``"../hip/X.cuh"`` resolved against the including file)
moved-include          ``#include`` of a file in the ``--moves`` set (from one that stays)
python-torch-cuda      ``torch.cuda``, ``torch.backends.cudnn``, ``torch._C._cusparselt``,
                       ``_cuda_*``, ``.cuda()``, a string naming one
vendor-identifier      any other identifier in code that names a vendor (``TEST_WITH_ROCM``,
                       ``cudnn_batch_norm``, ``CUDA_HELP``)
vendor-op              in generated code: a vendor-named operator it declares
                       (``cudnn_convolution``), or an include of ``ATen/ops/<vendor op>.h``
cuda-mention           a vendor word in a string literal
comment-mention        a vendor word in a comment
=====================  ==============================================================

A preprocessor conditional is reported once, at its first vendor directive, with the
extent of the whole ``#if ... #endif`` and each branch labelled ("CUDA side", "ROCm
side", "CUDA+ROCm side" or "other", see :mod:`torchsplit.scan.conditions`); it carries
every category its conditions belong to. Tokens inside ``#define`` bodies are classified
like any code, with the column of their own physical line. Matches inside comments and
strings never count for the code categories.

Per file the scan also says whether its code is all the vendor's (:attr:`FileResult.
vendor_code`): every line of code inside vendor-side branches, an unconditional include
of a vendor SDK or backend header, or a module-level import of a vendor SDK in Python.
"""

from __future__ import annotations

import os
import re
import stat
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

from torchsplit import vendors
from torchsplit.scan import conditions
from torchsplit.scan.classify import (
    TORCH_ROOTS,
    FileNames,
    Hit,
    classify_c,
    classify_include,
    classify_python,
    classify_string,
    squash,
)
from torchsplit.scan.lexer import CHAR, COMMENT, Lines, Tokens, lex_c, lex_python
from torchsplit.scan.words import (
    COMPILER_MACRO,
    Spans,
    families_of,
    first_candidate,
    has_cu_include,
    vendor_spans,
    vendor_words,
)

__all__ = [
    "CATEGORIES",
    "MENTION_CATEGORIES",
    "NON_CODE_CATEGORIES",
    "TORCH_ROOTS",
    "FileResult",
    "Finding",
    "MovedFiles",
    "ScanResult",
    "Selection",
    "families_of",
    "scan_c_text",
    "scan_paths",
    "scan_python_text",
    "scan_tree",
    "vendor_words",
]

CATEGORIES: dict[str, str] = {
    "use-cuda-guard": "preprocessor conditional on a CUDA/ROCm build flag",
    "cuda-compiler-macro": "__CUDACC__/__CUDA_ARCH__/__NVCC__/__HIPCC__/__HIP__...",
    "cuda-api-macro": "torch's own macro around a vendor (export, check, helpers)",
    "vendor-api": "vendor API: C names, SDK macros/constants, SDK namespaces",
    "vendor-setting": "torch's per-vendor state/settings (userEnabledCuDNN, allowTF32CuBLAS)",
    "is-cuda": "is_cuda()/is_hip() test",
    "device-type-cuda": "CUDA/HIP device type, dispatch key or backend bit",
    "cuda-device-string": '"cuda" device string',
    "dlopen": "string naming a vendor shared library (dlopen/ctypes)",
    "cuda-include": "include of a vendor SDK header",
    "backend-include": "include of a torch backend header that moves",
    "moved-include": "include of a file in the --moves set",
    "python-torch-cuda": "torch.cuda / torch.backends.cudnn / _cuda_* use in Python",
    "vendor-identifier": "other identifier in code naming a vendor",
    "vendor-op": "a vendor-named ATen operator declared by generated code (cudnn_convolution)",
    "cuda-mention": "vendor word in a string literal",
    "comment-mention": "vendor word in a comment",
}
MENTION_CATEGORIES = frozenset(("cuda-mention", "comment-mention"))
# Not a coupling to remove from a file that stays: prose, and the operator registry's
# declarations of vendor-named operators (their schema stays in core).
NON_CODE_CATEGORIES = MENTION_CATEGORIES | {"vendor-op"}

C_SUFFIXES = (
    ".c",
    ".cc",
    ".cpp",
    ".cxx",
    ".h",
    ".hh",
    ".hpp",
    ".hxx",
    ".cu",
    ".cuh",
    ".inl",
    ".ipp",
    ".mm",
    ".m",
)
PY_SUFFIXES = (".py", ".pyi")
DEFAULT_SUFFIXES = C_SUFFIXES + PY_SUFFIXES

TEXT_WIDTH = 160  # a finding's source text is cut to this many characters
BINARY_PROBE = 8192  # bytes read to tell a binary file (a NUL byte) from text
GENERATED_PROBE = 2048  # the @generated marker must sit in the file's head
STRING_PROBE = 4096  # only a string literal's head is classified

# --- findings ---------------------------------------------------------------------------


# Slots: no per-instance __dict__, so a finding costs about half as much memory. The
# path string is shared by every finding of a file, never copied. Not frozen: a frozen
# dataclass sets each field through object.__setattr__, five times slower to build, and
# a large tree has tens of thousands of findings. Nothing changes a finding once made.
@dataclass(order=True, slots=True)
class Finding:
    path: str
    line: int
    column: int
    category: str
    message: str
    text: str = ""
    span: tuple[int, int] | None = None  # a conditional: #if line .. #endif line
    families: tuple[str, ...] = ("cuda",)
    also: tuple[str, ...] = ()  # further categories of the same finding (a conditional)
    branches: tuple[tuple[int, int, str], ...] = ()  # (first line, last line, label)

    @property
    def categories(self) -> tuple[str, ...]:
        return (self.category, *self.also)

    def fields(self) -> tuple[object, ...]:
        """Every field but the path (shared by all findings of a file)."""
        return (
            self.line,
            self.column,
            self.category,
            self.message,
            self.text,
            self.span,
            self.families,
            self.also,
            self.branches,
        )

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "category": self.category,
            "categories": list(self.categories),
            "families": list(self.families),
            "message": self.message,
            "text": self.text,
        }
        if self.span is not None:
            out["span"] = list(self.span)
            out["branches"] = [{"lines": [a, b], "side": s} for a, b, s in self.branches]
        return out


DEFAULT_MAX_PER_FILE = 1000  # the CLI's --max-per-file default


class AllowRule(Protocol):
    """An allowlist entry as the scan sees it (:class:`~torchsplit.scan.allowlist.AllowEntry`)."""

    index: int

    def matches_path(self, path: str) -> bool: ...

    def matches(self, finding: Finding) -> bool: ...


@dataclass(frozen=True)
class Selection:
    """What a scan keeps, applied to each finding as it is made, before the per-file limit.

    ``max_per_file`` bounds how many findings (and, separately, allowlisted findings) of
    one file are kept as objects: the first ones in sort order, i.e. by (line, column,
    category, message, ...); the others are only counted. 0 keeps them all.
    """

    categories: frozenset[str] = frozenset(CATEGORIES)
    family: str = "all"
    allow: tuple[AllowRule, ...] = ()
    max_per_file: int = 0
    texts: bool = True  # keep each finding's source line (a text --plan never shows it)

    def selects(self, categories: tuple[str, ...], families: tuple[str, ...]) -> bool:
        if self.categories.isdisjoint(categories):
            return False
        return self.family == "all" or self.family in families


EVERYTHING = Selection()


@dataclass
class Tally:
    """Findings counted but not kept as objects (beyond ``max_per_file``)."""

    count: int = 0
    code: int = 0  # those with a code category (not only mentions or vendor-op)
    categories: Counter[str] = field(default_factory=Counter)

    def add(self, categories: tuple[str, ...]) -> None:
        self.count += 1
        if not NON_CODE_CATEGORIES.issuperset(categories):
            self.code += 1
        counts = self.categories
        for category in categories:  # not Counter.update: its Mapping check costs more
            counts[category] += 1


def _sort_key(item: tuple[Finding, int]) -> tuple[object, ...]:
    """A finding's sort order (the dataclass order: path is one per file) and its entry."""
    f = item[0]
    return (
        f.line,
        f.column,
        f.category,
        f.message,
        f.text,
        f.span or (),
        f.families,
        f.also,
        f.branches,
        item[1],
    )


class _FirstN:
    """The first ``limit`` items in sort order (all when ``limit`` is 0); a tally of the rest.

    Findings arrive mostly in line order, but a conditional is only made when its
    ``#endif`` is seen and each pass (directives, code, strings, comments) starts over at
    the top, so items are buffered up to twice the limit, then sorted and cut back. After
    the first cut, ``bound`` is the sort key of the last kept item: anything after it can
    never be kept and is counted without building a Finding (the fast path of a dense
    file).
    """

    def __init__(self, limit: int):
        self.limit = limit
        self.items: list[tuple[Finding, int]] = []  # (finding, allowlist entry or 0)
        self.rest = Tally()
        self.bound: tuple[int, int, str, str] | None = None

    def wants(self, key: tuple[int, int, str, str]) -> bool:
        """False when a finding with this (line, column, category, message) cannot be kept."""
        return self.bound is None or key <= self.bound

    def add(self, finding: Finding, entry: int = 0) -> None:
        self.items.append((finding, entry))
        if self.limit and len(self.items) >= 2 * self.limit:
            self._cut()

    def _cut(self) -> None:
        self.items.sort(key=_sort_key)  # a tuple key: compared in C, not by dataclass methods
        if self.limit and len(self.items) > self.limit:
            for finding, _ in self.items[self.limit :]:
                self.rest.add(finding.categories)
            del self.items[self.limit :]
            last = self.items[-1][0]
            self.bound = (last.line, last.column, last.category, last.message)

    def result(self) -> list[tuple[Finding, int]]:
        self._cut()
        return self.items


class FileSink:
    """Where a file's findings go: filtered, allowlisted, then kept or counted.

    Filters and allowlist apply first, so what they drop never counts against the limit.
    """

    def __init__(self, path: str, lines: Lines, selection: Selection):
        self.path = path
        self.lines = lines
        self.selection = selection
        self.vendor_code: tuple[tuple[str, ...], str] | None = None
        # An entry's path glob is the same for every finding of the file: test it once.
        self.rules = [r for r in selection.allow if r.matches_path(path)]
        # Every finding is selected unless a category or family filter is set.
        self.filtered = selection.family != "all" or selection.categories != EVERYTHING.categories
        self.kept = _FirstN(selection.max_per_file)
        self.allowed = _FirstN(selection.max_per_file)
        self.used: set[int] = set()  # allowlist entries that matched something

    def add(
        self,
        line: int,
        col: int,
        category: str,
        message: str,
        fams: tuple[str, ...],
        *,
        span: tuple[int, int] | None = None,
        also: tuple[str, ...] = (),
        branches: tuple[tuple[int, int, str], ...] = (),
        line_start: int,
    ) -> None:
        """One finding; ``line_start`` is the offset where its line starts."""
        categories = (category, *also) if also else (category,)
        if self.filtered and not self.selection.selects(categories, fams):
            return
        if not self.rules and not self.kept.wants((line, col, category, message)):
            self.kept.rest.add(categories)
            return
        finding = Finding(
            self.path,
            line,
            col,
            category,
            message,
            line_text(self.lines, col, line_start) if self.selection.texts else "",
            span,
            fams,
            also,
            branches,
        )
        rule = next((r for r in self.rules if r.matches(finding)), None) if self.rules else None
        if rule is None:
            self.kept.add(finding)
            return
        self.used.add(rule.index)
        self.allowed.add(finding, rule.index)

    def fill(self, result: FileResult) -> None:
        result.findings = [f for f, _ in self.kept.result()]
        result.unlisted = self.kept.rest
        result.allowed = self.allowed.result()
        result.allowed_unlisted = self.allowed.rest.count
        result.used_entries = frozenset(self.used)
        result.vendor_code = self.vendor_code


@dataclass
class MovedFiles:
    """Files that move to third_device: include matching by basename, then path suffix."""

    paths: set[str] = field(default_factory=set)
    by_basename: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def from_sources(cls, sources: Iterable[str]) -> MovedFiles:
        moved = cls()
        for source in sources:
            if source.startswith((":", "//", "@")):
                continue
            stem, _ = os.path.splitext(source)
            for path in (source, stem + ".h", stem + ".hpp", stem + ".cuh"):
                if path not in moved.paths:
                    moved.paths.add(path)
                    moved.by_basename.setdefault(os.path.basename(path), []).append(path)
        return moved

    def match(self, include: str) -> str | None:
        for path in self.by_basename.get(os.path.basename(include), ()):
            if path == include or path.endswith("/" + include):
                return path
        return None

    def moves(self, rel_path: str) -> bool:
        if rel_path in self.paths:
            return True
        return any(
            rel_path.endswith("/" + p) for p in self.by_basename.get(os.path.basename(rel_path), ())
        )


# --- text of a finding --------------------------------------------------------------------


def line_text(lines: Lines, column: int, start: int) -> str:
    """The text around ``column`` of the line starting at ``start``, never copying more
    than a window of it."""
    text = lines.text
    low = start + max(0, column - 1 - TEXT_WIDTH)
    limit = start + column - 1 + TEXT_WIDTH
    end = text.find("\n", low, limit)
    if end < 0:
        end = min(len(text), limit)
    cut = excerpt(text[low:end], column - (low - start))
    return cut if low == start or cut.startswith("...") else "..." + cut


def excerpt(line: str, column: int = 1) -> str:
    """``line`` stripped and cut to TEXT_WIDTH characters around ``column``."""
    if len(line) <= TEXT_WIDTH:
        return line.strip()
    begin = max(0, min(column - 1 - TEXT_WIDTH // 4, len(line) - TEXT_WIDTH))
    cut = line[begin : begin + TEXT_WIDTH].strip()
    return ("..." if begin else "") + cut + ("..." if begin + TEXT_WIDTH < len(line) else "")


# --- conditionals -----------------------------------------------------------------------

_KEYWORD = re.compile(r"#[ \t]*(?P<kw>[a-z_]+)\b")
_CONDITIONAL_KEYWORDS = frozenset(("if", "ifdef", "ifndef", "elif", "else", "endif"))
# SDK include directories whose names hold no vendor word: <cute/...>, <ck/...>.
SDK_INCLUDE_HEADS = frozenset(n for names in vendors.SDK_NAMESPACES.values() for n in names)
_NAME = re.compile(r"[ \t]*(\w+)")
_INCLUDE = re.compile(
    r'[ \t]*#[ \t]*(?:include|include_next|import)[ \t]*(?P<q>[<"])(?P<path>[^>"\n]+)[>"]'
)
_DEFINE_AT = re.compile(r"#[ \t]*define[ \t]+(?P<name>\w+)[ \t]*(?:\n|\Z|//|/\*)")
_DEFINE_NAME = re.compile(r"[ \t]+(?P<name>\w+)")
_CONTINUATION = re.compile(r"\\\r?\n")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_GUARD_DIRECTIVES = frozenset(("if", "ifdef", "ifndef", "elif"))
# A line of code that is more than structure: not a directive (but a #define is code),
# not a brace, a namespace or an extern "C" block.
_SUBSTANTIVE = re.compile(
    r'^[ \t]*(?:#[ \t]*define\b|(?!#|\}|\{|namespace\b|extern[ \t]+"C"|;|$)\S)', re.M
)


@dataclass
class _Branch:
    line: int
    kw: str
    offset: int = 0  # where its line starts
    rest: tuple[int, int] = (0, 0)  # where its condition is in the text
    families: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()


@dataclass
class _Conditional:
    branches: list[_Branch]
    include_guard: bool = False


def _condition(branch: _Branch, rest: str) -> None:
    """The vendor families and categories of a branch's condition ``rest``."""
    if branch.kw not in _GUARD_DIRECTIVES:
        return
    cats: list[str] = []
    fams: set[str] = set()
    for m in _IDENT.finditer(rest):
        ident = m.group(0)
        if ident == "defined":
            continue
        if COMPILER_MACRO.fullmatch(ident):
            if "cuda-compiler-macro" not in cats:
                cats.append("cuda-compiler-macro")
            fams.add("rocm" if ident.startswith("__HIP") else "cuda")
            continue
        words = vendor_words(ident)
        if words:
            if "use-cuda-guard" not in cats:
                cats.append("use-cuda-guard")
            fams.update(words.values())
    branch.categories = tuple(sorted(cats, key=lambda c: c != "use-cuda-guard"))
    branch.families = tuple(sorted(fams))


_SIDE_FAMILIES = {
    "CUDA side": ("cuda",),
    "ROCm side": ("rocm",),
    "CUDA+ROCm side": ("cuda", "rocm"),
}


class _LineSet:
    """A set of line numbers as one byte a line: a file of directives has millions."""

    def __init__(self, lines: int):
        self.flags = bytearray(lines + 2)

    def add(self, line: int) -> None:
        self.flags[line] = 1

    def update(self, lines: range) -> None:
        self.flags[lines.start : lines.stop] = b"\1" * len(lines)

    def __contains__(self, line: int) -> bool:
        return bool(self.flags[line])


# --- C/C++ ------------------------------------------------------------------------------


class _CScan:
    """One C/C++/CUDA file: directives first, then code, strings and comments.

    A directive line without a vendor identifier is only followed for its structure
    (nesting, include guards): its text is never masked or classified.
    """

    def __init__(
        self,
        text: str,
        path: str,
        moved: MovedFiles | None,
        file_moves: bool,
        spans: Spans,
    ):
        self.text = text
        self.path = path
        self.moved = moved
        self.file_moves = file_moves
        self.spans = spans
        self.lines = Lines(text)
        self.tokens = lex_c(text)
        self.skip = _LineSet(len(self.lines))  # directive lines reported as a whole
        self.defined: set[str] = set()
        # offsets of the bodies of vendor-side branches, with their families
        self.vendor_bodies: list[tuple[int, int, tuple[str, ...]]] = []
        self.guard_defines: list[tuple[int, int]] = []  # offsets of include guards' #define
        self.requires: tuple[tuple[str, ...], str] | None = None

    def _vendor(self, start: int, end: int) -> bool:
        """Whether a vendor identifier starts in ``text[start:end]``."""
        return self.spans.any_between(start, end)

    def _unworded(self, start: int) -> bool:
        """An include of a vendor's file that holds no vendor word: a ``.cu``/``.cuh``
        source, or a vendor SDK's directory (``<cute/...>``, ``<ck/...>``)."""
        inc = _INCLUDE.match(self.text, start, min(len(self.text), start + 4096))
        if inc is None:
            return False
        target = inc.group("path")
        return target.endswith((".cu", ".cuh")) or target.split("/", 1)[0] in SDK_INCLUDE_HEADS

    def _rest(self, branch: _Branch) -> str:
        """A branch's condition, comments and strings blanked, continuations joined."""
        rest = self.tokens.masked(*branch.rest)
        return _CONTINUATION.sub(" ", rest) if "\\" in rest else rest

    def directives(self, add: Callable[..., None]) -> None:
        text, tokens, lines = self.text, self.tokens, self.lines
        stack: list[_Conditional] = []
        every_include = self.moved is not None and not self.file_moves
        done = 0  # end of the last directive: its continuation lines are not directives
        size = len(text)
        hash_at = text.find("#")
        while hash_at >= 0:
            start = text.rfind("\n", 0, hash_at) + 1
            nxt = hash_at + 1
            if start < done or text[start:hash_at].strip(" \t") or tokens.find(hash_at) >= 0:
                hash_at = text.find("#", nxt)
                continue
            end = text.find("\n", hash_at)
            if end < 0:
                end = size
            while end < size and text[end - 1] == "\\" and tokens.find(end - 1) < 0:
                more = text.find("\n", end + 1)
                end = size if more < 0 else more
            done = end
            hash_at = text.find("#", end)
            d = _KEYWORD.match(text, nxt - 1, end)
            if d is None:
                continue
            kw = d.group("kw")
            if kw == "define":
                if self._vendor(start, end):
                    name = _DEFINE_NAME.match(text, d.end(), end)
                    if name is not None:
                        self.defined.add(name.group("name"))
                continue
            include = kw in ("include", "include_next", "import")
            if not include and kw not in _CONDITIONAL_KEYWORDS:
                continue
            vendor = self._vendor(start, end)
            if include and not (vendor or every_include or self._unworded(start)):
                continue  # an include that names no vendor and no moved file
            line_no = lines.locate(start)[0]
            last_line = line_no + text.count("\n", start, end)
            if include:
                self.skip.update(range(line_no, last_line + 1))
                inc = _INCLUDE.match(text, start, min(len(text), start + 4096))
                if inc is not None:
                    depth = sum(1 for c in stack if not c.include_guard)
                    quoted = inc.group("q") == '"'
                    self._include(inc.group("path"), quoted, line_no, start, depth, add)
            elif kw == "endif":
                if stack:
                    self._close(stack.pop(), line_no, start, True, add)
            else:
                branch = _Branch(line_no, kw, start, (d.end(), end))
                if vendor:
                    _condition(branch, self._rest(branch))
                if kw in ("elif", "else"):
                    self.skip.update(range(line_no, last_line + 1))
                    if stack:
                        stack[-1].branches.append(branch)
                    continue
                cond = _Conditional([branch])
                name = _NAME.match(text, d.end(), end) if kw == "ifndef" else None
                if name is not None:
                    guard = self._include_guard(end, name.group(1))
                    if guard:
                        cond.include_guard = True
                        self.guard_defines.append(guard[1:])
                        if branch.families:
                            self.skip.add(guard[0])
                stack.append(cond)
                self.skip.update(range(line_no, last_line + 1))
        for cond in reversed(stack):  # unterminated conditionals run to the end of the file
            self._close(cond, len(lines), size, False, add)

    def _include_guard(self, end: int, name: str) -> tuple[int, int, int] | None:
        """(line, start, end) of ``#define NAME`` (no value) right after ``#ifndef NAME``;
        ``#ifndef X`` / ``#define X 1`` is a default for a setting, not a guard."""
        at = self.tokens.next_code(end)
        m = _DEFINE_AT.match(self.text, at)
        if m is None or m.group("name") != name:
            return None
        line_end = self.text.find("\n", at)
        return self.lines.locate(at)[0], at, len(self.text) if line_end < 0 else line_end

    def _close(
        self,
        cond: _Conditional,
        end_line: int,
        end_offset: int,
        terminated: bool,
        add: Callable[..., None],
    ) -> None:
        vendor = [b for b in cond.branches if b.families]
        if not vendor or cond.include_guard:
            return
        first = vendor[0]
        cats: list[str] = []
        fams: set[str] = set()
        for b in vendor:
            fams.update(b.families)
            cats.extend(c for c in b.categories if c not in cats)
        cats.sort(key=lambda c: c != "use-cuda-guard")
        rests = [self._rest(b) for b in cond.branches]
        labels = conditions.branch_sides(
            [(b.kw, r) for b, r in zip(cond.branches, rests, strict=True)]
        )
        bounds = [b.line for b in cond.branches] + [end_line]
        branches = tuple((bounds[i], bounds[i + 1], labels[i]) for i in range(len(cond.branches)))
        if "use-cuda-guard" in cats:  # a compiler-only #if is a core header's too
            ends = [b.offset for b in cond.branches[1:]] + [end_offset]
            for branch, body_end, (_, _, side) in zip(cond.branches, ends, branches, strict=True):
                if side in _SIDE_FAMILIES:  # from the end of the directive to the next one
                    self.vendor_bodies.append((branch.rest[1], body_end, _SIDE_FAMILIES[side]))
        start = cond.branches[0].line
        sides = ", ".join(f"{a}-{b} {s}" for a, b, s in branches)
        tail = "" if terminated else ", no #endif"
        add(
            first.line,
            1,
            cats[0],
            f"#{first.kw} {squash(self._rest(first))}: lines {start}-{end_line} ({sides}{tail})",
            tuple(sorted(fams)),
            span=(start, end_line),
            also=tuple(cats[1:]),
            branches=branches,
            line_start=first.offset,
        )

    def _include(
        self,
        target: str,
        quoted: bool,
        line_no: int,
        line_start: int,
        depth: int,
        add: Callable[..., None],
    ) -> None:
        hit = classify_include(target, quoted, self.path)
        resolved = hit[3] if hit is not None else target
        if self.moved is not None and not self.file_moves:
            moved = self.moved.match(resolved)
            if moved is not None:
                shown = target if resolved == target else f"{target} (= {resolved})"
                add(
                    line_no,
                    1,
                    "moved-include",
                    f"includes {shown}, which moves ({moved})",
                    families_of(moved) or ("cuda",),
                    line_start=line_start,
                )
                return
        if hit is None:
            return
        category, message, fams, resolved = hit
        add(line_no, 1, category, message, fams, line_start=line_start)
        sdk = category == "cuda-include" and resolved.split("/", 1)[0] not in TORCH_ROOTS
        if sdk and depth == 0 and self.requires is None:  # a torch header is an edit
            self.requires = (fams, f"includes the vendor SDK's <{target}> unconditionally")

    def vendor_code(self) -> tuple[tuple[str, ...], str] | None:
        """Families and reason when the file's code is all a vendor's."""
        if self.requires is not None:
            return self.requires
        if not self.vendor_bodies:
            return None
        bodies = sorted(self.vendor_bodies)
        fams = sorted({f for _, _, fs in bodies for f in fs})
        # Code outside every vendor-side branch (an include guard's #define aside) makes
        # the file shared; code inside one makes it the vendor's.
        outside: list[tuple[int, int]] = []
        pos = 0
        for lo, hi in sorted([(a, b) for a, b, _ in bodies] + self.guard_defines):
            if lo > pos:
                outside.append((pos, lo))
            pos = max(pos, hi)
        outside.append((pos, len(self.text)))
        if any(self._has_code(lo, hi) for lo, hi in outside):
            return None
        if not any(self._has_code(lo, hi) for lo, hi, _ in bodies):
            return None
        return tuple(fams), "all its code is inside vendor-side #if branches"

    def _has_code(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` (whole lines) holds a line of code."""
        return start < end and _SUBSTANTIVE.search(self.tokens.masked(start, end)) is not None


def scan_c_text(
    text: str,
    path: str,
    *,
    moved: MovedFiles | None = None,
    file_moves: bool = False,
    selection: Selection = EVERYTHING,
) -> list[Finding]:
    """The findings of one C/C++/CUDA file, sorted."""
    result = FileResult(path)
    _scan_c(text, path, moved, file_moves, selection).fill(result)
    return result.findings


def _scan_c(
    text: str,
    path: str,
    moved: MovedFiles | None,
    file_moves: bool,
    selection: Selection,
    spans: Spans | None = None,
    generated: bool = False,
) -> FileSink:
    if spans is None:
        spans = vendor_spans(text)
    scan = _CScan(text, path, moved, file_moves, spans)
    lines, tokens, skip = scan.lines, scan.tokens, scan.skip
    sink = FileSink(path, lines, selection)
    add = sink.add
    scan.directives(add)
    names = FileNames(text, frozenset(scan.defined))
    hits = _TokenHits()
    # An identifier's category depends on it and on the characters next to it only
    # (unless it is qualified: Enum::Member): the same spelling recurs, classify it once.
    seen: dict[tuple[str, str, str], Hit | None] = {}
    for start, end in _code_spans(text, spans, tokens, hits):
        line_no, col = lines.locate(start)
        if line_no in skip:
            continue
        before = text[max(0, start - 8) : start].rstrip()[-2:]
        key = (text[start:end], before, text[end : end + 8].lstrip(" \t")[:2])
        if before == "::":
            hit = classify_c(text, start, end, names, generated)
        elif key in seen:
            hit = seen[key]
        else:
            hit = seen[key] = classify_c(text, start, end, names, generated)
        if hit is not None:
            add(line_no, col, hit[0], hit[1], hit[2], line_start=start - col + 1)
    _report_tokens(text, tokens, lines, hits, add, skip)
    sink.vendor_code = scan.vendor_code()
    return sink


class _TokenHits:
    """The comments and strings that hold vendor identifiers, with those identifiers.

    Three arrays (token index, identifier bounds), filled in text order: a file dense
    with comments has millions.
    """

    def __init__(self) -> None:
        self.tokens = array("q")
        self.starts = array("q")
        self.ends = array("q")

    def add(self, index: int, start: int, end: int) -> None:
        self.tokens.append(index)
        self.starts.append(start)
        self.ends.append(end)

    def groups(self) -> Iterator[tuple[int, list[tuple[int, int]]]]:
        """(token index, its identifiers), token by token."""
        tokens, starts, ends = self.tokens, self.starts, self.ends
        i, total = 0, len(tokens)
        while i < total:
            index = tokens[i]
            j = i
            while j < total and tokens[j] == index:
                j += 1
            yield index, list(zip(starts[i:j], ends[i:j], strict=True))
            i = j


def _code_spans(
    text: str, spans: Spans, tokens: Tokens, hits: _TokenHits
) -> Iterator[tuple[int, int]]:
    """The vendor identifiers in code; those in a comment or a string go to ``hits``."""
    for start, end in spans:
        index = tokens.find(start)
        if index >= 0:
            hits.add(index, start, end)
        elif not text[start].isdigit():
            yield start, end


def _words(text: str, spans: list[tuple[int, int]]) -> dict[str, str]:
    """The vendor words of the identifiers ``spans`` of ``text``, in order."""
    found: dict[str, str] = {}
    for start, end in spans:
        for word, fam in vendor_words(text[start:end]).items():
            found.setdefault(word, fam)
    return found


# an argument-name comment, clang-tidy's bugprone-argument-comment form: f(x, /*is_cuda=*/true)
_ARGUMENT_COMMENT = re.compile(r"/\*[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*\*/")


def _at_argument(text: str, start: int) -> bool:
    """Whether ``text[start]`` begins an argument: after ``(``, ``,`` or ``{``."""
    return text[max(0, start - 256) : start].rstrip()[-1:] in ("(", ",", "{")


def _report_tokens(
    text: str,
    tokens: Tokens,
    lines: Lines,
    hits: _TokenHits,
    add: Callable[..., None],
    skip: _LineSet | None,
) -> None:
    """Strings (classified whole) and comments (each line) that hold vendor words.

    The words come from the vendor identifiers already found inside them.
    """
    for index, spans in hits.groups():
        kind = tokens.kind(index)
        if kind == CHAR:
            continue
        start = tokens.starts[index]
        if kind == COMMENT:
            first_line, col = lines.locate(start)
            argument = (
                _ARGUMENT_COMMENT.fullmatch(text, start, tokens.ends[index])
                if skip is not None
                else None
            )
            if argument is not None and _at_argument(text, start):
                # f(x, /*is_cuda=*/true): the comment names the callee's parameter, and
                # so the call depends on a vendor-named parameter (code, not prose)
                name = argument.group(1)
                add(
                    first_line,
                    col,
                    "vendor-identifier",
                    f"passes argument {name}",
                    families_of(name),
                    line_start=start - col + 1,
                )
                continue
            by_line: dict[int, tuple[int, list[tuple[int, int]]]] = {}
            for span in spans:
                line_no, span_col = lines.locate(span[0])
                by_line.setdefault(line_no, (span[0] - span_col + 1, []))[1].append(span)
            for line_no, (line_start, line_spans) in by_line.items():
                words = _words(text, line_spans)
                if words:
                    add(
                        line_no,
                        col if line_no == first_line else 1,
                        "comment-mention",
                        f"comment mentions {', '.join(list(words)[:6])}",
                        tuple(sorted(set(words.values()))),
                        line_start=line_start,
                    )
            continue
        body, body_end = tokens.body(index)
        # C reports a string just after its opening quote (a raw string at its delimiter),
        # Python at its contents (after the triple quotes).
        line_no, col = lines.locate(start + 1 if skip is not None else body)
        if skip is not None and line_no in skip:
            continue
        probe = min(body_end, body + STRING_PROBE)
        words = _words(text, [sp for sp in spans if sp[1] <= probe])
        hit = classify_string(text[body:probe], words)
        if hit is not None:
            at = start + 1 if skip is not None else body
            add(line_no, col, hit[0], hit[1], hit[2], line_start=at - col + 1)


# --- Python -----------------------------------------------------------------------------

_PY_TOP_IMPORT = re.compile(r"(?:from|import)[ \t]+\Z")


def _sdk_module_family(module: str) -> str | None:
    for fam, names in vendors.SDK_PYTHON_MODULES.items():
        for name in names:
            if module == name or module.startswith(name + "."):
                return fam
    return None


def _top_level_import(text: str, start: int, end: int) -> str | None:
    """The module ``text[start:end]`` begins, when a module-level import names it there."""
    line = text.rfind("\n", 0, start) + 1
    if not _PY_TOP_IMPORT.match(text, line, start):
        return None
    module = re.match(r"[\w.]+", text[start : start + 200])
    return module.group(0) if module is not None else None


def scan_python_text(text: str, path: str, *, selection: Selection = EVERYTHING) -> list[Finding]:
    """The findings of one Python file, sorted."""
    result = FileResult(path)
    _scan_python(text, path, selection).fill(result)
    return result.findings


def _scan_python(
    text: str,
    path: str,
    selection: Selection,
    spans: Spans | None = None,
    generated: bool = False,
) -> FileSink:
    lines = Lines(text)
    sink = FileSink(path, lines, selection)
    add = sink.add
    tokens = lex_python(text)
    hits = _TokenHits()
    binding_stub = path.endswith(".pyi") and "/_C/" in f"/{path}"
    if spans is None:
        spans = vendor_spans(text)
    for start, end in _code_spans(text, spans, tokens, hits):
        hit = classify_python(text, start, end, generated, binding_stub)
        if hit is not None:
            line_no, col = lines.locate(hit[3])
            add(line_no, col, hit[0], hit[1], hit[2], line_start=hit[3] - col + 1)
            if hit[0] == "vendor-api" and sink.vendor_code is None:
                module = _top_level_import(text, start, end)  # import cutlass.cute, at column 0
                fam = _sdk_module_family(module) if module else None
                if fam is not None:
                    sink.vendor_code = ((fam,), f"imports {module} at module level")
    _report_tokens(text, tokens, lines, hits, add, None)
    return sink


# --- files ------------------------------------------------------------------------------


@dataclass
class FileResult:
    path: str
    # The selected, not allowlisted findings kept as objects (the first max_per_file
    # in sort order), sorted; ``unlisted`` counts the others.
    findings: list[Finding] = field(default_factory=list)
    generated: str | None = None  # the generator template, for @generated files
    note: str | None = None  # skipped (not a regular file, binary): not an error
    error: str | None = None  # could not be read: an error
    unlisted: Tally = field(default_factory=Tally)
    allowed: list[tuple[Finding, int]] = field(default_factory=list)  # (finding, entry index)
    allowed_unlisted: int = 0
    used_entries: frozenset[int] = frozenset()  # allowlist entries that matched here
    # (families, reason) when the file's code is all a vendor's (it moves whole)
    vendor_code: tuple[tuple[str, ...], str] | None = None

    @property
    def total(self) -> int:
        """Selected, not allowlisted findings, listed or not."""
        return len(self.findings) + self.unlisted.count

    @property
    def allowed_total(self) -> int:
        return len(self.allowed) + self.allowed_unlisted

    def category_counts(self) -> Counter[str]:
        """Every category of every finding, listed or not."""
        counts = Counter(c for f in self.findings for c in f.categories)
        counts.update(self.unlisted.categories)
        return counts

    def worth_reporting(self) -> bool:
        return bool(
            self.total
            or self.allowed_total
            or self.used_entries
            or self.generated
            or self.note
            or self.error
            or self.vendor_code
        )

    def pack(self) -> tuple[object, ...]:
        """Plain tuples, for a worker to send: pickled at C speed, unlike dataclasses."""
        rest = self.unlisted
        return (
            self.path,
            [f.fields() for f in self.findings],
            self.generated,
            self.note,
            self.error,
            (rest.count, rest.code, dict(rest.categories)),
            [(f.fields(), entry) for f, entry in self.allowed],
            self.allowed_unlisted,
            tuple(self.used_entries),
            self.vendor_code,
        )

    @classmethod
    def unpack(cls, packed: tuple) -> FileResult:  # type: ignore[type-arg]
        path, findings, generated, note, error, rest, allowed, *tail = packed
        allowed_unlisted, used, vendor_code = tail
        count, code, categories = rest
        return cls(
            path,
            [Finding(path, *f) for f in findings],
            generated,
            note,
            error,
            Tally(count, code, Counter(categories)),
            [(Finding(path, *f), entry) for f, entry in allowed],
            allowed_unlisted,
            frozenset(used),
            vendor_code,
        )


_GENERATED = re.compile(
    rb"@generated(?:[ \t]+(?:by|from)[ \t]+(?P<by>[^\s*]+)"
    rb"(?:[ \t]+from[ \t]+(?P<tpl>[^\s*]+))?)?"
)


def generated_template(head: bytes) -> str | None:
    """The template a generated file comes from (``@generated by X from T`` -> "X:T")."""
    m = _GENERATED.search(head)
    if m is None:
        return None
    by = (m.group("by") or b"").decode("utf-8", "replace")
    tpl = (m.group("tpl") or b"").decode("utf-8", "replace")
    if tpl:
        return f"{by}:{tpl}"
    return by or "(unnamed generator)"


def read_regular(path: str) -> tuple[bytes | None, str | None, str | None]:
    """(content, note, error): only regular files are read, never blocking on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        return None, None, exc.strerror or str(exc)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            return None, f"skipped: not a regular file ({_kind(mode)})", None
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks), None, None
    except OSError as exc:
        return None, None, exc.strerror or str(exc)
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "named pipe"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISDIR, "directory"),
    ):
        if test(mode):
            return name
    return "special file"


def scan_file(
    path: str, display: str, moved: MovedFiles | None, selection: Selection = EVERYTHING
) -> FileResult:
    result = FileResult(display)
    try:
        lmode = os.stat(path).st_mode
    except OSError as exc:
        result.error = exc.strerror or str(exc)
        return result
    if not stat.S_ISREG(lmode):  # never open a FIFO, socket or device
        result.note = f"skipped: not a regular file ({_kind(lmode)})"
        return result
    raw, result.note, result.error = read_regular(path)
    if raw is None:
        return result
    if b"\0" in raw[:BINARY_PROBE]:
        result.note = "skipped: binary file (NUL byte in the first 8 KiB)"
        return result
    result.generated = generated_template(raw[:GENERATED_PROBE])
    file_moves = moved.moves(display) if moved is not None else False
    includes_matter = moved is not None and not file_moves
    candidate = first_candidate(raw)
    if candidate is None and not (includes_matter and b"include" in raw):
        return result  # most files: never decoded
    text = raw.decode("utf-8", errors="replace")
    aligned = len(text) == len(raw)  # byte offsets are text offsets
    del raw  # a file's bytes, lower-cased bytes and text: never all three at once
    spans = vendor_spans(text, candidate if aligned else None)
    del candidate
    if not spans and not has_cu_include(text) and not (includes_matter and "include" in text):
        return result
    if path.endswith(PY_SUFFIXES):
        sink = _scan_python(text, display, selection, spans, result.generated is not None)
    else:
        generated = result.generated is not None
        sink = _scan_c(text, display, moved, file_moves, selection, spans, generated)
    sink.fill(result)
    return result


@dataclass
class WalkIssue:
    path: str
    message: str
    error: bool


def iter_files(
    roots: Iterable[str], suffixes: tuple[str, ...], issues: list[WalkIssue] | None = None
) -> Iterator[str]:
    """Files to scan. Roots given explicitly are scanned whatever their suffix.

    Missing roots and directories that cannot be listed are appended to ``issues``.
    """
    if issues is None:
        issues = []
    for root in roots:
        try:
            mode = os.stat(root).st_mode
        except OSError as exc:
            issues.append(WalkIssue(root, exc.strerror or str(exc), True))
            continue
        if not stat.S_ISDIR(mode):
            yield root
            continue

        def onerror(exc: OSError, root: str = root) -> None:
            issues.append(
                WalkIssue(exc.filename or root, f"cannot list: {exc.strerror or exc}", True)
            )

        for dirpath, dirnames, filenames in os.walk(root, onerror=onerror):
            dirnames[:] = sorted(
                d
                for d in dirnames
                if not d.startswith(".") and not d.startswith("bazel-") and d != "__pycache__"
            )
            for name in sorted(filenames):
                if name.endswith(suffixes):
                    yield os.path.join(dirpath, name)


_Batch = tuple[list[tuple[str, str]], MovedFiles | None, Selection]


def _scan_batch(args: _Batch) -> list[FileResult]:
    batch, moved, selection = args
    out = []
    for path, display in batch:
        result = scan_file(path, display, moved, selection)
        if result.worth_reporting():
            out.append(result)
    return out


def _scan_batch_packed(args: _Batch) -> list[tuple]:  # type: ignore[type-arg]
    """A worker's batch, as :meth:`FileResult.pack` tuples."""
    return [r.pack() for r in _scan_batch(args)]


@dataclass
class ScanResult:
    files: list[FileResult]  # files with findings, a generator marker, a note or an error
    scanned: int
    issues: list[WalkIssue]
    paths: list[str] = field(default_factory=list)  # every scanned file, as displayed

    @property
    def findings(self) -> list[Finding]:
        """The listed findings (all of them unless ``max_per_file`` cut some)."""
        return [f for r in self.files for f in r.findings]

    @property
    def total(self) -> int:
        """Every selected, not allowlisted finding, listed or not."""
        return sum(r.total for r in self.files)

    @property
    def unlisted(self) -> int:
        return sum(r.unlisted.count for r in self.files)

    @property
    def allowed(self) -> list[tuple[Finding, int]]:
        return [a for r in self.files for a in r.allowed]

    @property
    def allowed_total(self) -> int:
        return sum(r.allowed_total for r in self.files)

    def used_entries(self) -> set[int]:
        return {i for r in self.files for i in r.used_entries}

    def all_issues(self) -> list[WalkIssue]:
        out = list(self.issues)
        for r in self.files:
            if r.error:
                out.append(WalkIssue(r.path, f"cannot read: {r.error}", True))
            elif r.note:
                out.append(WalkIssue(r.path, r.note, False))
        return out


def scan_tree(
    roots: list[str],
    *,
    base: str = ".",
    suffixes: tuple[str, ...] = DEFAULT_SUFFIXES,
    moved: MovedFiles | None = None,
    jobs: int = 1,
    selection: Selection = EVERYTHING,
) -> ScanResult:
    """Scan every matching file under ``roots``; paths are shown relative to ``base``.

    ``selection`` filters and allowlists findings and bounds how many of each file are
    kept (default: every finding, all kept).
    """
    base_abs = os.path.abspath(base)
    issues: list[WalkIssue] = []
    work: list[tuple[str, str]] = []
    seen: set[tuple[int, int] | str] = set()
    for path in iter_files(roots, suffixes, issues):
        # One stat per file, not realpath's lstat per path component (the walk's
        # serial part); a file that cannot be stat'ed is kept for scan_file to report.
        try:
            info = os.stat(path)
            real: tuple[int, int] | str = (info.st_dev, info.st_ino)
        except OSError:
            real = os.path.abspath(path)
        if real in seen:  # overlapping roots (include/ and its parent) scan a file once
            continue
        seen.add(real)
        rel = os.path.relpath(os.path.abspath(path), base_abs).replace(os.sep, "/")
        work.append((path, rel))
    files: list[FileResult] = []
    if jobs <= 1 or len(work) < 64:
        files = _scan_batch((work, moved, selection))
    else:
        size = max(16, len(work) // (jobs * 8))
        batches = [(work[i : i + size], moved, selection) for i in range(0, len(work), size)]
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for part in pool.map(_scan_batch_packed, batches):
                files.extend(FileResult.unpack(packed) for packed in part)
    files.sort(key=lambda r: r.path)
    return ScanResult(files, len(work), issues, [display for _, display in work])


def scan_paths(
    roots: list[str],
    *,
    base: str = ".",
    suffixes: tuple[str, ...] = DEFAULT_SUFFIXES,
    moved: MovedFiles | None = None,
    jobs: int = 1,
) -> tuple[list[Finding], int]:
    """All findings, sorted, and the number of files scanned."""
    result = scan_tree(roots, base=base, suffixes=suffixes, moved=moved, jobs=jobs)
    return sorted(result.findings), result.scanned
