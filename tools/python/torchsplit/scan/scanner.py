"""Find GPU-vendor couplings (CUDA and ROCm/HIP) inside C/C++/CUDA/Python source files.

Each finding has a file, line, column, one or more categories and the vendor
families it belongs to ("cuda", "rocm": see :mod:`torchsplit.vendors`). Categories:

=====================  ==============================================================
use-cuda-guard         a conditional on a build flag (USE_CUDA, USE_ROCM, CUDA_VERSION...)
cuda-compiler-macro    ``__CUDACC__``/``__CUDA_ARCH__``/``__NVCC__``/``__HIPCC__``/``__HIP__``...
cuda-api-macro         torch's vendor export/check macros (``TORCH_CUDA_CPP_API``,
                       ``C10_CUDA_CHECK``, ``MIOPEN_CHECK``, ``C10D_NCCL_CHECK``...)
vendor-api             a vendor C API name (``cudaStream_t``, ``cuInit``, ``hipMalloc``...)
is-cuda                ``.is_cuda()`` / ``.is_hip()`` tests
device-type-cuda       ``kCUDA``, ``DeviceType::HIP``, ``DispatchKey::SparseCUDA``...
cuda-device-string     a device string literal ``"cuda"``, ``"cuda:1"``, ``f"cuda:{rank}"``
dlopen                 a string naming a vendor shared library (``"libcuda.so.1"``)
cuda-include           ``#include`` of a vendor SDK header (cuda_runtime.h, hip/..., nvml.h)
backend-include        ``#include`` of a torch backend header that moves (``ATen/cuda/...``,
                       ``"../hip/X.cuh"`` resolved against the including file)
moved-include          ``#include`` of a file in the ``--moves`` set (from one that stays)
python-torch-cuda      ``torch.cuda``, ``torch.backends.cudnn``, ``_cuda_*``, ``.cuda()``...
cuda-mention           any other vendor word in code or in a string literal
comment-mention        a vendor word in a comment
=====================  ==============================================================

A preprocessor conditional is reported once, at its first vendor directive, with the
extent of the whole ``#if ... #endif`` and each branch labelled ("CUDA side", "ROCm
side", "CUDA+ROCm side" or "other"); it carries every category its conditions belong
to. Tokens inside ``#define`` bodies are classified like any code, with the column of
their own physical line. Matches inside comments and strings never count for the code
categories.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import itertools
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

CATEGORIES: dict[str, str] = {
    "use-cuda-guard": "preprocessor conditional on a CUDA/ROCm build flag",
    "cuda-compiler-macro": "__CUDACC__/__CUDA_ARCH__/__NVCC__/__HIPCC__/__HIP__...",
    "cuda-api-macro": "vendor export/check macro",
    "vendor-api": "vendor C API name (cudaStream_t, cuInit, hipMalloc...)",
    "is-cuda": "is_cuda()/is_hip() test",
    "device-type-cuda": "CUDA/HIP device type or dispatch key",
    "cuda-device-string": '"cuda" device string',
    "dlopen": "string naming a vendor shared library (dlopen/ctypes)",
    "cuda-include": "include of a vendor SDK header",
    "backend-include": "include of a torch backend header that moves",
    "moved-include": "include of a file in the --moves set",
    "python-torch-cuda": "torch.cuda / _cuda_* use in Python",
    "cuda-mention": "other vendor word in code or a string",
    "comment-mention": "vendor word in a comment",
}
MENTION_CATEGORIES = frozenset(("cuda-mention", "comment-mention"))

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
TORCH_ROOTS = frozenset(("ATen", "c10", "torch", "caffe2", "THC", "aten", "THCUNN"))

# --- vocabulary (from torchsplit.vendors) -----------------------------------------------

_PREFIX = {w: fam for fam, words in vendors.SOURCE_PREFIX_WORDS.items() for w in words}
_EXACT = {w: fam for fam, words in vendors.SOURCE_EXACT_WORDS.items() for w in words}
_PREFIX_RE = re.compile("(" + "|".join(sorted(_PREFIX, key=len, reverse=True)) + ")")
_THC = re.compile(vendors.THC_REGEX)


def _trie(words: list[str]) -> str:
    """An alternation factored by first letter: far faster than a flat one in ``re``."""
    heads: dict[str, list[str]] = {}
    for word in words:
        heads.setdefault(word[0], []).append(word[1:])
    alts = []
    for head, rests in sorted(heads.items()):
        if "" in rests:  # the head alone already marks a candidate
            alts.append(re.escape(head))
        elif len(rests) == 1:
            alts.append(re.escape(head + rests[0]))
        else:
            alts.append(re.escape(head) + "(?:" + _trie(rests) + ")")
    return "|".join(alts)


# Candidates: run on lower-cased text, plus the case-sensitive driver-API spellings.
_CANDIDATE_LOW = re.compile(_trie(list(vendors.source_substrings())))
_CANDIDATE_LOW_I = re.compile(_CANDIDATE_LOW.pattern, re.IGNORECASE)
_CANDIDATE_CU = re.compile(r"cu[A-Z]|CU[a-z]")
_CU_SUFFIX = re.compile(r"\.cuh?\b")


def _candidates(text: str) -> Iterator[int]:
    """Offsets in ``text`` where a vendor token may start, in order (possibly repeated).

    Lazy: a dense 50 MB file has millions of candidates, and a list of them as Python
    ints would cost more memory than the text itself.
    """
    return heapq.merge(*_candidate_runs(text))


def _candidate_runs(text: str) -> tuple[Iterator[int], Iterator[int]]:
    """The two sources of candidates, each in order (words; driver-API spellings)."""
    low = text.lower()
    if len(low) == len(text):
        hits = (m.start() for m in _CANDIDATE_LOW.finditer(low))
    else:  # a non-ASCII character changed length when lower-cased: keep offsets exact
        del low
        hits = (m.start() for m in _CANDIDATE_LOW_I.finditer(text))
    return hits, (m.start() for m in _CANDIDATE_CU.finditer(text))


def has_candidate(text: str) -> bool:
    """Complete prefilter: False only when ``text`` cannot hold any finding.

    A substring hit counts only when the identifier around it is a vendor token (so
    "relationship" does not make a file worth lexing), a library file name
    (``libMIOpen``), or a ``.cu``/``.cuh`` include.
    """
    # Any one candidate settles it, so order does not matter: no merge (called per token).
    for pos in itertools.chain(*_candidate_runs(text)):
        start, end = _ident_at(text, pos)
        ident = text[start:end]
        if not ident:
            continue
        if ident.startswith("lib") or vendor_words(ident) or _COMPILER_MACRO.fullmatch(ident):
            return True
        if any(rx.match(ident) for _, rx in _API):
            return True
    return _CU_SUFFIX.search(text) is not None


_COMPILER_MACRO = re.compile(r"\b" + vendors.COMPILER_MACRO_REGEX + r"\b")
_API = [(fam, re.compile(rf"(?:{rx})\Z")) for fam, rx in vendors.API_REGEX.items()]
_DEVICE_WORD = {w: fam for fam, ws in vendors.DEVICE_TYPE_WORDS.items() for w in ws}
_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def vendor_words(text: str) -> dict[str, str]:
    """Vendor words in ``text`` (identifier, path or prose), each with its family."""
    return dict(_vendor_words(text))


@functools.lru_cache(maxsize=1 << 16)
def _vendor_words(text: str) -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    for part in _SPLIT.split(text):
        if not part:
            continue
        if _THC.match(part):
            found.setdefault("thc", "cuda")
        pieces = _CAMEL.findall(part)
        for piece in (part, *pieces):
            lower = piece.lower()
            fam = _EXACT.get(lower)
            if fam is None:
                m = _PREFIX_RE.match(lower)
                if m is not None:
                    fam = _PREFIX[m.group(1)]
                    lower = m.group(1)
            if fam is not None:
                found.setdefault(lower, fam)
    return tuple(found.items())


def families_of(text: str) -> tuple[str, ...]:
    return tuple(sorted(set(vendor_words(text).values())))


# --- findings ---------------------------------------------------------------------------


# Slots: no per-instance __dict__, so a finding costs about half as much memory. The
# path string is shared by every finding of a file, never copied.
@dataclass(frozen=True, order=True, slots=True)
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

    def selects(self, categories: tuple[str, ...], families: tuple[str, ...]) -> bool:
        if self.categories.isdisjoint(categories):
            return False
        return self.family == "all" or self.family in families


EVERYTHING = Selection()


@dataclass
class Tally:
    """Findings counted but not kept as objects (beyond ``max_per_file``)."""

    count: int = 0
    code: int = 0  # those with a code category (not only comment/cuda-mention)
    categories: Counter[str] = field(default_factory=Counter)

    def add(self, categories: tuple[str, ...]) -> None:
        self.count += 1
        if not MENTION_CATEGORIES.issuperset(categories):
            self.code += 1
        self.categories.update(categories)


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
        self.items.sort()
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

    def __init__(self, path: str, line_text: Callable[[int, int], str], selection: Selection):
        self.path = path
        self.line_text = line_text
        self.selection = selection
        # An entry's path glob is the same for every finding of the file: test it once.
        self.rules = [r for r in selection.allow if r.matches_path(path)]
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
    ) -> None:
        categories = (category, *also) if also else (category,)
        if not self.selection.selects(categories, fams):
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
            self.line_text(line, col),
            span,
            fams,
            also,
            branches,
        )
        rule = next((r for r in self.rules if r.matches(finding)), None)
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


class _Lines:
    def __init__(self, text: str):
        self.text = text
        # An array, not a list: 8 bytes a line instead of ~36 (a million-line file).
        self.starts = array("q", [0])
        self.starts.extend(m.end() for m in re.finditer("\n", text))

    def locate(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1

    def line_text(self, number: int, column: int = 1) -> str:
        """The line's text around ``column``, never copying more than a window of it."""
        start = self.starts[number - 1]
        low = start + max(0, column - 1 - TEXT_WIDTH)
        limit = start + column - 1 + TEXT_WIDTH
        end = self.text.find("\n", low, limit)
        if end < 0:
            end = min(len(self.text), limit)
        text = excerpt(self.text[low:end], column - (low - start))
        return text if low == start or text.startswith("...") else "..." + text


def excerpt(line: str, column: int = 1) -> str:
    """``line`` stripped and cut to TEXT_WIDTH characters around ``column``."""
    if len(line) <= TEXT_WIDTH:
        return line.strip()
    begin = max(0, min(column - 1 - TEXT_WIDTH // 4, len(line) - TEXT_WIDTH))
    cut = line[begin : begin + TEXT_WIDTH].strip()
    return ("..." if begin else "") + cut + ("..." if begin + TEXT_WIDTH < len(line) else "")


def _squash(text: str, width: int = 100) -> str:
    out = " ".join(text.split())
    return out if len(out) <= width else out[: width - 3] + "..."


def _blank(text: str) -> str:
    if "\n" not in text:
        return " " * len(text)
    return re.sub(r"[^\n]", " ", text)


class _Pieces:
    """Builds a long string from many small pieces, joining them as it goes.

    A file dense with comments or strings has millions of pieces: a list of them all
    costs far more memory than the text they make up.
    """

    BATCH = 4096

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.pieces: list[str] = []

    def append(self, piece: str) -> None:
        self.pieces.append(piece)
        if len(self.pieces) >= self.BATCH:
            self.chunks.append("".join(self.pieces))
            self.pieces.clear()

    def join(self) -> str:
        self.chunks.append("".join(self.pieces))
        return "".join(self.chunks)


class _Spans:
    """Comments or string contents worth a look, as (reported offset, start, end).

    Offsets in an array, not copies of the text: a file dense with comments would
    otherwise hold a second copy of itself as millions of small strings.
    """

    def __init__(self) -> None:
        self.flat = array("q")

    def append(self, start: int, end: int, at: int | None = None) -> None:
        self.flat.extend((start if at is None else at, start, end))

    def __iter__(self) -> Iterator[tuple[int, int, int]]:
        flat = self.flat
        return ((flat[i], flat[i + 1], flat[i + 2]) for i in range(0, len(flat), 3))


# Every alternative starts with a literal character, so ``re`` can skip ahead fast;
# identifier boundaries are checked by look-behinds placed after that character.
_RAW_OPEN = r"(?:R(?<![A-Za-z0-9_]R)|u8R(?<![A-Za-z0-9_]u8R)|[uUL]R(?<![A-Za-z0-9_][uUL]R))"
_STR_OPEN = r'(?:"|u8"(?<![A-Za-z0-9_]u8")|[uUL]"(?<![A-Za-z0-9_][uUL]"))'
_C_LEX = re.compile(
    r"(?P<lc>//[^\n]*)"
    r"|(?P<bc>/\*.*?(?:\*/|\Z))"
    r"|(?P<raw>" + _RAW_OPEN + r'"(?P<delim>[^()\\\s"]{0,16})\(.*?\)(?P=delim)")'
    r"|(?P<str>" + _STR_OPEN + r'(?:\\.|[^"\\\n])*")'
    r"|(?P<chr>'(?<![A-Za-z0-9_]')(?:\\.|[^'\\\n]){1,8}')",
    re.S,
)
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(?P<kw>[a-z_]+)\b(?P<rest>.*)$")
_INCLUDE = re.compile(
    r'^[ \t]*#[ \t]*(?:include|include_next|import)[ \t]*(?P<q>[<"])(?P<path>[^>"]+)[>"]'
)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(?P<name>\w+)")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_GUARD_DIRECTIVES = frozenset(("if", "ifdef", "ifndef", "elif"))
# Each alternative starts with a literal character so ``re`` can skip ahead fast; the
# word boundary before it is a look-behind placed after that character.
_PY_TORCH_CUDA = re.compile(
    r"t(?<![\w.]t)orch\.(?:cuda|backends\.(?:cuda|cudnn|miopen)|version\.(?:cuda|hip)"
    r"|_C\._cuda\w*)\b"
    r"|_(?<![\w.]_)cuda_\w+"
    r"|\.cuda\s*\("
)
_DEVICE_STRING = re.compile(r"(?P<w>cuda|hip)(?::(?:\d+|\{[^{}]*\}|%d|)?)?")
_DEVICE_QUALIFIER = re.compile(r"(?:DeviceType|DispatchKey|Backend)\s*::\s*\Z")
# Torch's own macros around a vendor API (C10_CUDA_CHECK, TORCH_CUDA_CPP_API, MIOPEN_CHECK)
# win over the vendor's enum spellings (CUFFT_SUCCESS) that share their prefix.
_TORCH_MACRO = re.compile(r"_(?:CHECK|API|ASSERT|LAUNCH|EXPORT|IMPORT)(?:_|\Z)|^(?:C10|AT|TORCH)_")
_IS_DEVICE = re.compile(r"is_(?:cuda|hip)\Z")


def _lex_c(text: str) -> tuple[str, _Spans, _Spans]:
    """Masked code (comments and string contents blanked), comments, string contents."""
    pieces = _Pieces()
    comments = _Spans()
    strings = _Spans()
    last = 0
    for m in _C_LEX.finditer(text):
        pieces.append(text[last : m.start()])
        token = m.group(0)
        kind = m.lastgroup
        if kind in ("lc", "bc"):
            if has_candidate(token):  # keep only comments that can hold a mention
                comments.append(m.start(), m.end())
            pieces.append(_blank(token))
        elif kind in ("raw", "str", "delim"):
            quote = token.index('"')
            start, end = quote + 1, len(token) - 1
            if m.group("raw") is not None:
                delim = m.group("delim") or ""
                start, end = quote + 2 + len(delim), len(token) - 2 - len(delim)
            if has_candidate(token[start:end]):
                # reported where the literal's text starts, a raw string's delimiter too
                strings.append(m.start() + start, m.start() + end, at=m.start() + quote + 1)
            pieces.append(token[: quote + 1] + _blank(token[quote + 1 : -1]) + token[-1])
        else:  # char literal
            pieces.append(token[0] + _blank(token[1:-1]) + token[-1])
        last = m.end()
    pieces.append(text[last:])
    return pieces.join(), comments, strings


def _classify_ident(code: str, start: int, end: int) -> tuple[str, str, tuple[str, ...]] | None:
    """(category, message, families) of the identifier ``code[start:end]``, if vendor."""
    ident = code[start:end]
    if _COMPILER_MACRO.fullmatch(ident):
        fam = "rocm" if ident.startswith("__HIP") else "cuda"
        return "cuda-compiler-macro", f"uses {ident}", (fam,)
    if ident in ("kCUDA", "kHIP"):
        return "device-type-cuda", f"names {ident}", (_DEVICE_WORD[ident[1:]],)
    qualifier = _DEVICE_QUALIFIER.search(code, max(0, start - 40), start)
    if qualifier is not None:
        fams = {fam for w, fam in _DEVICE_WORD.items() if w in _CAMEL.findall(ident)}
        if fams:
            owner = qualifier.group(0).split(":")[0].strip()
            return "device-type-cuda", f"names {owner}::{ident}", tuple(sorted(fams))
    if _IS_DEVICE.match(ident):
        before = code[max(0, start - 8) : start].rstrip()
        after = code[end : end + 8].lstrip()
        if before.endswith((".", "->")) or after.startswith("("):
            fam = "rocm" if ident.endswith("hip") else "cuda"
            return "is-cuda", f"tests {ident}", (fam,)
    words = vendor_words(ident)
    macro = "_" in ident.strip("_") and ident.upper() == ident and not ident.startswith("_")
    if macro and words and _TORCH_MACRO.search(ident):
        return "cuda-api-macro", f"uses {ident}", tuple(sorted(set(words.values())))
    for fam, rx in _API:
        if rx.match(ident):
            return "vendor-api", f"uses {ident}", (fam,)
    if not words:
        return None
    fams = tuple(sorted(set(words.values())))
    if macro:
        return "cuda-api-macro", f"uses {ident}", fams
    return "cuda-mention", f"names {ident}", fams


def _ident_at(code: str, pos: int) -> tuple[int, int]:
    start = pos
    while start > 0 and code[start - 1] in _IDENT_CHARS:
        start -= 1
    end = pos
    while end < len(code) and code[end] in _IDENT_CHARS:
        end += 1
    return start, end


def _vendor_idents(code: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each identifier in ``code`` holding a candidate vendor substring."""
    last_end = -1
    for pos in _candidates(code):
        if pos < last_end:
            continue
        start, end = _ident_at(code, pos)
        if end <= start or code[start].isdigit():
            continue
        last_end = end
        yield start, end


# --- conditionals -----------------------------------------------------------------------


@dataclass
class _Branch:
    line: int
    kw: str
    condition: str
    families: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    negated: bool = False


@dataclass
class _Conditional:
    branches: list[_Branch]
    include_guard: bool = False


def _condition(kw: str, rest: str) -> _Branch:
    branch = _Branch(0, kw, rest.strip())
    if kw not in _GUARD_DIRECTIVES:
        return branch
    cats: list[str] = []
    fams: set[str] = set()
    for m in _IDENT.finditer(rest):
        ident = m.group(0)
        if ident == "defined":
            continue
        if _COMPILER_MACRO.fullmatch(ident):
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
    simple = "&&" not in rest and "||" not in rest
    branch.negated = kw == "ifndef" or (simple and rest.lstrip().startswith("!"))
    return branch


def _side(families: tuple[str, ...]) -> str:
    if families == ("cuda",):
        return "CUDA side"
    if families == ("rocm",):
        return "ROCm side"
    return "CUDA+ROCm side"


def _labels(branches: list[_Branch]) -> list[str]:
    labels: list[str] = []
    negated: set[str] = set()
    for b in branches:
        if b.kw == "else":
            labels.append(_side(tuple(sorted(negated))) if negated else "other")
        elif b.families and not b.negated:
            labels.append(_side(b.families))
        else:
            if b.families:
                negated.update(b.families)
            labels.append("other")
    return labels


# --- C/C++ ------------------------------------------------------------------------------


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


class _CodeLines:
    """The lines of masked code, cut out on demand (``code.split`` would copy them all)."""

    def __init__(self, code: str, starts: array[int]):
        self.code = code
        self.starts = starts

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, index: int) -> str:
        end = self.starts[index + 1] - 1 if index + 1 < len(self.starts) else len(self.code)
        return self.code[self.starts[index] : end]


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
    text: str, path: str, moved: MovedFiles | None, file_moves: bool, selection: Selection
) -> FileSink:
    lines = _Lines(text)
    sink = FileSink(path, lines.line_text, selection)
    add = sink.add
    code, comments, strings = _lex_c(text)
    code_lines = _CodeLines(code, lines.starts)

    stack: list[_Conditional] = []
    skip_lines = _LineSet(len(code_lines))  # directive lines whose tokens this pass reports

    def close(cond: _Conditional, end_line: int, terminated: bool) -> None:
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
        labels = _labels(cond.branches)
        bounds = [b.line for b in cond.branches] + [end_line]
        branches = tuple((bounds[i], bounds[i + 1], labels[i]) for i in range(len(cond.branches)))
        start = cond.branches[0].line
        sides = ", ".join(f"{a}-{b} {s}" for a, b, s in branches)
        tail = "" if terminated else ", no #endif"
        add(
            first.line,
            1,
            cats[0],
            f"#{first.kw} {_squash(first.condition)}: lines {start}-{end_line} ({sides}{tail})",
            tuple(sorted(fams)),
            span=(start, end_line),
            also=tuple(cats[1:]),
            branches=branches,
        )

    number = 0
    total = len(code_lines)
    while number < total:
        # Jump to the next line holding a '#': most lines of most files hold none.
        hash_at = code.find("#", lines.starts[number])
        if hash_at < 0:
            break
        number = bisect.bisect_right(lines.starts, hash_at) - 1
        start = number
        logical = code_lines[number]
        while logical.endswith("\\") and number + 1 < total:
            number += 1
            logical = logical[:-1] + " " + code_lines[number]
        number += 1
        m = _DIRECTIVE.match(logical)
        if m is None:
            continue
        line_no = start + 1
        kw, rest = m.group("kw"), m.group("rest")
        if kw in ("if", "ifdef", "ifndef"):
            branch = _condition(kw, rest)
            branch.line = line_no
            cond = _Conditional([branch])
            if kw == "ifndef" and branch.families:
                cond.include_guard = _is_include_guard(code_lines, number, rest.strip())
                if cond.include_guard:
                    skip_lines.add(_next_code_line(code_lines, number) + 1)
            stack.append(cond)
            skip_lines.update(range(line_no, number + 1))
        elif kw in ("elif", "else"):
            skip_lines.update(range(line_no, number + 1))
            if stack:
                branch = _condition(kw, rest)
                branch.line = line_no
                stack[-1].branches.append(branch)
        elif kw == "endif":
            if stack:
                close(stack.pop(), line_no, True)
        elif kw in ("include", "include_next", "import"):
            skip_lines.update(range(line_no, number + 1))
            inc = _INCLUDE.match(text[lines.starts[start] : lines.starts[start] + 4096])
            if inc is not None:
                _include(
                    inc.group("path"), inc.group("q") == '"', path, line_no, moved, file_moves, add
                )
    for cond in reversed(stack):  # unterminated conditionals run to the end of the file
        close(cond, total, False)

    # Code tokens (also inside #define bodies and other directives), on masked code.
    for start, end in _vendor_idents(code):
        line_no, col = lines.locate(start)
        if line_no in skip_lines:
            continue
        hit = _classify_ident(code, start, end)
        if hit is not None:
            add(line_no, col, hit[0], hit[1], hit[2])

    for at, offset, end in strings:
        line_no, col = lines.locate(at)
        if line_no in skip_lines:
            continue
        _string(text[offset : min(end, offset + STRING_PROBE)], line_no, col, add)
    for offset, _, end in comments:
        comment = text[offset:end]
        first_line, _ = lines.locate(offset)
        for delta, piece in enumerate(comment.split("\n")):
            words = vendor_words(piece)
            if words:
                line_no = first_line + delta
                col = offset - lines.starts[first_line - 1] + 1 if delta == 0 else 1
                add(
                    line_no,
                    col,
                    "comment-mention",
                    f"comment mentions {', '.join(list(words)[:6])}",
                    tuple(sorted(set(words.values()))),
                )
    return sink


def _next_code_line(code_lines: _CodeLines, index: int) -> int:
    while index < len(code_lines) and not code_lines[index].strip():
        index += 1
    return index


def _is_include_guard(code_lines: _CodeLines, index: int, name: str) -> bool:
    """``#ifndef X`` directly followed by ``#define X``: a header's include guard."""
    index = _next_code_line(code_lines, index)
    if index >= len(code_lines):
        return False
    m = _DEFINE.match(code_lines[index])
    return m is not None and m.group("name") == name


def _include(target, quoted, path, line_no, moved, file_moves, add) -> None:
    resolved = target
    if quoted and target.startswith(("./", "../")):
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), target)).replace(
            os.sep, "/"
        )
    shown = target if resolved == target else f"{target} (= {resolved})"
    if moved is not None and not file_moves:
        hit = moved.match(resolved)
        if hit is not None:
            add(
                line_no,
                1,
                "moved-include",
                f"includes {shown}, which moves ({hit})",
                families_of(hit) or ("cuda",),
            )
            return
    head = resolved.split("/", 1)[0]
    backend = vendors.move_family(resolved)
    if backend is not None and (head in TORCH_ROOTS or resolved != target or quoted):
        add(
            line_no,
            1,
            "backend-include",
            f"includes backend header {shown} ({backend[1]})",
            (backend[0],),
        )
        return
    words = vendor_words(target)
    if words:
        add(
            line_no,
            1,
            "cuda-include",
            f"includes {'vendor-named torch header' if head in TORCH_ROOTS else 'vendor header'}"
            f" <{target}>",
            tuple(sorted(set(words.values()))),
        )


def _string(content: str, line_no: int, col: int, add) -> None:
    if len(content) > STRING_PROBE:
        content = content[:STRING_PROBE]
    m = _DEVICE_STRING.fullmatch(content)
    if m is not None:
        fam = "rocm" if m.group("w") == "hip" else "cuda"
        add(line_no, col, "cuda-device-string", f'device string "{content}"', (fam,))
        return
    fam = vendors.library_family(content)
    if fam is not None:
        add(line_no, col, "dlopen", f'names vendor library "{_squash(content, 60)}"', (fam,))
        return
    if has_candidate(content):
        words = vendor_words(content)
        if words:
            add(
                line_no,
                col,
                "cuda-mention",
                f"string mentions {', '.join(list(words)[:6])}",
                tuple(sorted(set(words.values()))),
            )


# --- Python -----------------------------------------------------------------------------


# Python comments and string literals (any prefix, triple quotes across lines). A regular
# expression instead of ``tokenize``: ten times faster, and it never gives up on a file.
_PY_LEX = re.compile(
    r"(?P<c>#[^\n]*)"
    r"|'''(?P<b1>(?:\\.|[^\\])*?)'''"
    r'|"""(?P<b2>(?:\\.|[^\\])*?)"""'
    r"|'(?P<b3>(?:\\.|[^'\\\n])*)'"
    r'|"(?P<b4>(?:\\.|[^"\\\n])*)"',
    re.S,
)
_PY_BODIES = ("b1", "b2", "b3", "b4")


def _lex_python(text: str) -> tuple[str, _Spans, _Spans]:
    pieces = _Pieces()
    comments = _Spans()
    strings = _Spans()
    last = 0
    for m in _PY_LEX.finditer(text):
        pieces.append(text[last : m.start()])
        token = m.group(0)
        if m.group("c") is not None:
            if has_candidate(token):
                comments.append(m.start(), m.end())
        else:
            group = next(g for g in _PY_BODIES if m.group(g) is not None)
            if has_candidate(m.group(group)):
                strings.append(m.start(group), m.end(group))
        pieces.append(_blank(token))
        last = m.end()
    pieces.append(text[last:])
    return pieces.join(), comments, strings


def scan_python_text(text: str, path: str, *, selection: Selection = EVERYTHING) -> list[Finding]:
    """The findings of one Python file, sorted."""
    result = FileResult(path)
    _scan_python(text, path, selection).fill(result)
    return result.findings


def _scan_python(text: str, path: str, selection: Selection) -> FileSink:
    lines = _Lines(text)
    sink = FileSink(path, lines.line_text, selection)
    add = sink.add
    code, comments, strings = _lex_python(text)

    # Spans of torch.cuda-style uses, in order: identifiers inside them are not reported
    # again. Looked up by bisection (a scan of all of them was quadratic).
    taken_starts = array("q")
    taken_ends = array("q")
    for m in _PY_TORCH_CUDA.finditer(code):
        line_no, col = lines.locate(m.start())
        fam = "rocm" if m.group(0).endswith(("hip", "miopen")) else "cuda"
        taken_starts.append(m.start())
        taken_ends.append(m.end())
        add(line_no, col, "python-torch-cuda", f"uses {_squash(m.group(0))}", (fam,))
    for start, end in _vendor_idents(code):
        index = bisect.bisect_right(taken_starts, start) - 1
        if index >= 0 and start < taken_ends[index]:
            continue
        hit = _classify_ident(code, start, end)
        if hit is not None:
            line_no, col = lines.locate(start)
            add(line_no, col, hit[0], hit[1], hit[2])
    for _, offset, end in strings:
        line_no, col = lines.locate(offset)
        _string(text[offset : min(end, offset + STRING_PROBE)], line_no, col, add)
    for offset, _, end in comments:
        words = vendor_words(text[offset:end])
        if words:
            line_no, col = lines.locate(offset)
            add(
                line_no,
                col,
                "comment-mention",
                f"comment mentions {', '.join(list(words)[:6])}",
                tuple(sorted(set(words.values()))),
            )
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
    text = raw.decode("utf-8", errors="replace")
    del raw
    file_moves = moved.moves(display) if moved is not None else False
    if not has_candidate(text):
        if moved is None or file_moves or "include" not in text:
            return result
    if path.endswith(PY_SUFFIXES):
        sink = _scan_python(text, display, selection)
    else:
        sink = _scan_c(text, display, moved, file_moves, selection)
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
            for part in pool.map(_scan_batch, batches):
                files.extend(part)
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
