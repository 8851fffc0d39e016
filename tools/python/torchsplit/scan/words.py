"""Vendor words in source text, and where a file may hold a vendor token at all.

Compiled once from :mod:`torchsplit.vendors`. :func:`vendor_spans` is the scanner's
entry point: the identifiers of a text that name a vendor, found from substring
candidates (a factored alternation run on the lower-cased text, plus the case-sensitive
driver-API spellings), so a file without any is never lexed.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import re
from array import array
from collections.abc import Iterator, Mapping
from types import MappingProxyType

from torchsplit import vendors

_PREFIX = {w: fam for fam, words in vendors.SOURCE_PREFIX_WORDS.items() for w in words}
_EXACT = {w: fam for fam, words in vendors.SOURCE_EXACT_WORDS.items() for w in words}
_PREFIX_RE = re.compile("|".join(sorted(_PREFIX, key=len, reverse=True)))
_THC = re.compile(vendors.THC_REGEX)
_SPLIT = re.compile(r"[^A-Za-z0-9]+")
# Camel-case pieces: "userEnabledCuDNN" -> user, Enabled, Cu, DNN; "MIOpenConv" -> MI, Open..
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

COMPILER_MACRO = re.compile(r"\b" + vendors.COMPILER_MACRO_REGEX + r"\b")
API = [(fam, re.compile(rf"(?:{rx})\Z")) for fam, rx in vendors.API_REGEX.items()]
IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


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


def _minimal(words: tuple[str, ...]) -> list[str]:
    """``words`` without those that contain another (``libcuda`` holds ``cuda``)."""
    return sorted(w for w in words if not any(o != w and o in w for o in words))


# Candidates: run on lower-cased text, plus the case-sensitive driver-API spellings that
# hold no vendor word (cuInit, CUresult). One pattern per first letter: each starts with
# a literal ("c(?:u(?:da|dnn...", "n(?:ccl|v..."), which ``re`` finds by a fast scan for
# that character; one alternation of all the words would try a branch at every c, h, n,
# r, t... of the text.
_WORDS = _minimal(vendors.source_substrings())
_HEADS: dict[str, list[str]] = {}
for _word in _WORDS:
    _HEADS.setdefault(_word[0], []).append(_word)
# Most likely first ("cuda"), so the prefilter stops early in a vendor's file.
_HEAD_ORDER = sorted(_HEADS, key=lambda head: (head != "c", -len(_HEADS[head]), head))
_CANDIDATE_BYTES = [re.compile(_trie(_HEADS[head]).encode()) for head in _HEAD_ORDER]
_CANDIDATE_LOW = [re.compile(_trie(_HEADS[head])) for head in _HEAD_ORDER]
_CANDIDATE_LOW_I = re.compile(_trie(_WORDS), re.IGNORECASE)
_CANDIDATE_CASED = [re.compile(r"cu[A-Z]"), re.compile(r"CU[a-z]")]
_CANDIDATE_CASED_BYTES = [re.compile(rx.pattern.encode()) for rx in _CANDIDATE_CASED]
_CU_SUFFIX = re.compile(r"\.cuh?\b")
_CU_SUFFIX_BYTES = re.compile(rb"\.cuh?\b")
_IDENT_TAIL = re.compile(r"[A-Za-z0-9_]*")


def first_candidate(raw: bytes) -> bytes | None:
    """Cheap test on a file's bytes: None when no vendor token can be in it, else the
    lower-cased bytes (for :func:`vendor_spans`)."""
    low = raw.lower()
    if any(rx.search(low) for rx in _CANDIDATE_BYTES):
        return low
    if any(rx.search(raw) for rx in _CANDIDATE_CASED_BYTES) or _CU_SUFFIX_BYTES.search(raw):
        return low
    return None


def vendor_words(text: str) -> Mapping[str, str]:
    """Vendor words in ``text`` (identifier, path or prose), each with its family.

    Cached and read-only: identifiers repeat throughout a tree.
    """
    return _vendor_words(text)


@functools.lru_cache(maxsize=1 << 16)
def _vendor_words(text: str) -> Mapping[str, str]:
    found: dict[str, str] = {}
    for part in _SPLIT.split(text):
        if not part:
            continue
        if _THC.match(part):
            found.setdefault("thc", "cuda")
        lower = part.lower()
        starts = [0, 3] if lower.startswith("lib") else [0]  # libnvrtc names nvrtc
        if part == lower and part.isalpha():  # one lower-case piece: the common case
            fam = _EXACT.get(part)
            if fam is not None:
                found.setdefault(part, fam)
        else:
            # A whole piece may be an exact word ("hip" in kHIP); a prefix word may start
            # at any piece boundary and run on ("CuDNN" in userEnabledCuDNN, "MIOpen").
            for m in _CAMEL.finditer(part):
                piece = m.group(0).lower()
                fam = _EXACT.get(piece)
                if fam is not None:
                    found.setdefault(piece, fam)
                if m.start():
                    starts.append(m.start())
            fam = _EXACT.get(lower)
            if fam is not None:
                found.setdefault(lower, fam)
        for start in starts:
            m = _PREFIX_RE.match(lower, start)
            if m is not None:
                found.setdefault(m.group(0), _PREFIX[m.group(0)])
    return MappingProxyType(found)


@functools.lru_cache(maxsize=1 << 16)
def families_of(text: str) -> tuple[str, ...]:
    return tuple(sorted(set(vendor_words(text).values())))


@functools.lru_cache(maxsize=1 << 16)
def is_vendor_token(ident: str) -> bool:
    """Whether the identifier ``ident`` may be a vendor token (word, macro, API, library)."""
    if ident.startswith("lib") or _vendor_words(ident) or COMPILER_MACRO.fullmatch(ident):
        return True
    return any(rx.match(ident) for _, rx in API)


def ident_at(text: str, pos: int) -> tuple[int, int]:
    """The identifier around ``pos`` (empty when ``pos`` is not in one)."""
    start = pos
    while start > 0 and text[start - 1] in IDENT_CHARS:
        start -= 1
    m = _IDENT_TAIL.match(text, pos)
    return start, m.end() if m is not None else pos


def _candidate_runs(text: str, low: bytes | None = None) -> list[Iterator[int]]:
    """The sources of candidate offsets, each in order (one per word head; cased spellings).

    Lazy: a dense file has millions of candidates. ``low`` is the file's lower-cased bytes
    when their offsets are the text's (one byte a character).
    """
    if low is not None:
        runs = [(m.start() for m in rx.finditer(low)) for rx in _CANDIDATE_BYTES]
    else:
        lowered = text.lower()
        if len(lowered) == len(text):
            runs = [(m.start() for m in rx.finditer(lowered)) for rx in _CANDIDATE_LOW]
        else:  # a non-ASCII character changed length when lower-cased: keep offsets exact
            runs = [(m.start() for m in _CANDIDATE_LOW_I.finditer(text))]
    runs.extend((m.start() for m in rx.finditer(text)) for rx in _CANDIDATE_CASED)
    return runs


class Spans:
    """Identifier bounds in order, as two arrays (16 bytes each: a dense file has
    millions)."""

    __slots__ = ("ends", "starts")

    def __init__(self) -> None:
        self.starts = array("q")
        self.ends = array("q")

    def __len__(self) -> int:
        return len(self.starts)

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return zip(self.starts, self.ends, strict=True)

    def any_between(self, start: int, end: int) -> bool:
        """Whether an identifier starts in ``[start, end)``."""
        index = bisect.bisect_left(self.starts, start)
        return index < len(self.starts) and self.starts[index] < end


def vendor_spans(text: str, low: bytes | None = None) -> Spans:
    """Every identifier in ``text`` that may be a vendor token, in order.

    Complete: a vendor token (word, library name, compiler macro, API name) always holds
    a candidate substring. Comments and strings are not told from code here. ``low``
    comes from :func:`first_candidate` when the caller has it.
    """
    spans = Spans()
    starts, ends = spans.starts, spans.ends
    last_start = last_end = -1
    for pos in heapq.merge(*_candidate_runs(text, low)):
        if pos < last_end:  # another candidate inside the same identifier
            continue
        start, end = ident_at(text, pos)
        if end <= start or start == last_start:
            continue
        last_start, last_end = start, end
        if is_vendor_token(text[start:end]):
            starts.append(start)
            ends.append(end)
    return spans


def has_cu_include(text: str) -> bool:
    """A ``.cu``/``.cuh`` name: an include of a CUDA source holds no vendor word."""
    return _CU_SUFFIX.search(text) is not None
