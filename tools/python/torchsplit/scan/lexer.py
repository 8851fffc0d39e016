"""Where the comments and string literals of a C/C++/CUDA or Python file are.

The scanner never builds a masked copy of a file: it asks, for each vendor identifier
it found, whether it sits in a comment, a string or code (:meth:`Tokens.find`), and
masks only the few directive lines it parses (:meth:`Tokens.masked`).

Each lexer finds the next token start with one regular expression whose alternatives
all begin with a literal character, so ``re`` skips through plain code at C speed; raw
strings, C++14 digit separators and Python's triple quotes are finished by hand. A
token is stored as its two bounds only: its kind and its contents follow from its first
characters (the few that do not, raw strings and open triple quotes, are kept apart).
"""

from __future__ import annotations

import bisect
import re
from array import array

from torchsplit.scan.words import IDENT_CHARS

COMMENT = 0
STRING = 1
CHAR = 2

_KIND = {"/": COMMENT, "#": COMMENT, '"': STRING, "'": STRING}


class Tokens:
    """Comments, strings and character literals of one file, in order, never overlapping."""

    __slots__ = ("bodies", "ends", "python", "starts", "text")

    def __init__(self, text: str, python: bool):
        self.text = text
        self.python = python
        self.starts = array("q")  # 8 bytes a token: a dense file has millions
        self.ends = array("q")
        self.bodies: dict[int, tuple[int, int]] = {}  # token index -> contents, if unusual

    def kind(self, index: int) -> int:
        first = self.text[self.starts[index]]
        if first == "'" and not self.python:
            return CHAR
        return _KIND[first]

    def body(self, index: int) -> tuple[int, int]:
        """Bounds of a string's contents (between the quotes, or a raw string's parens)."""
        special = self.bodies.get(index)
        if special is not None:
            return special
        start, end = self.starts[index], self.ends[index]
        if self.python and end - start >= 6 and self.text[start + 1] == self.text[start + 2]:
            if self.text[start] == self.text[start + 1]:  # ''' or """
                return start + 3, end - 3
        return start + 1, end - 1

    def find(self, pos: int) -> int:
        """Index of the token holding offset ``pos``, or -1 when ``pos`` is code."""
        index = bisect.bisect_right(self.starts, pos) - 1
        if index >= 0 and pos < self.ends[index]:
            return index
        return -1

    def masked(self, start: int, end: int) -> str:
        """``text[start:end]`` with comments and string contents blanked."""
        starts, ends = self.starts, self.ends
        text = self.text
        last = bisect.bisect_right(starts, end - 1) - 1
        if last < 0 or ends[last] <= start:  # tokens never overlap: none in the range
            return text[start:end]
        out = []
        pos = start
        index = max(0, bisect.bisect_right(starts, start) - 1)
        while index <= last:
            if ends[index] > start:
                if self.kind(index) == COMMENT:
                    lo, hi = starts[index], ends[index]
                else:
                    lo, hi = self.body(index)
                lo, hi = max(lo, pos), min(hi, end)
                if hi > lo:
                    out.append(text[pos:lo])
                    out.append(_blank(text[lo:hi]))
                    pos = hi
            index += 1
        out.append(text[pos:end])
        return "".join(out)

    def next_code(self, pos: int) -> int:
        """The first offset at or after ``pos`` that is neither blank nor in a comment."""
        text = self.text
        size = len(text)
        while pos < size:
            if text[pos] in " \t\r\n\f\v":
                pos += 1
                continue
            index = self.find(pos)
            if index >= 0 and self.kind(index) == COMMENT:
                pos = self.ends[index]
                continue
            break
        return pos


def _blank(text: str) -> str:
    if "\n" not in text:
        return " " * len(text)
    return re.sub(r"[^\n]", " ", text)


# C/C++: raw strings' R", // and /* comments, "strings", 'c' literals. Every
# alternative starts with a literal character, so the search skips plain code quickly.
# Loops are unrolled ("[^"\\]*(?:\\.[^"\\]*)*"): ``re`` then runs each stretch of
# plain characters in one step instead of trying an alternation per character.
_C_TOKEN = re.compile(
    r"R\"|//[^\n]*|/\*[^*]*(?:\*+[^*/][^*]*)*(?:\*+/|\**\Z)"
    r"|\"[^\"\\\n]*(?:\\.[^\"\\\n]*)*\"|'(?:\\.|[^'\\\n]){1,8}'",
    re.S,
)
_C_RAW = re.compile(r'"([^()\\\s"]{0,16})\((.*?)\)\1"', re.S)


def _raw_prefix(text: str, quote: int) -> bool:
    """Whether the ``"`` at ``quote`` opens a raw string (R, u8R, uR, UR, LR)."""
    r = quote - 1
    if r < 0 or text[r] != "R":
        return False
    if r >= 2 and text[r - 2 : r] == "u8":
        head = r - 2
    elif r >= 1 and text[r - 1] in "uUL":
        head = r - 1
    else:
        head = r
    return head == 0 or text[head - 1] not in IDENT_CHARS


def lex_c(text: str) -> Tokens:
    tokens = Tokens(text, python=False)
    starts, ends = tokens.starts, tokens.ends
    pos: int | None = 0
    while pos is not None:
        resume = None  # where to search again when a match is not the token it seemed
        for m in _C_TOKEN.finditer(text, pos):
            start, end = m.span()
            first = text[start]
            if first == "R":
                raw = _C_RAW.match(text, start + 1) if _raw_prefix(text, start + 1) else None
                if raw is None:  # an identifier ending in R before a plain string
                    resume = start + 1
                else:
                    tokens.bodies[len(starts)] = raw.span(2)
                    starts.append(start + 1)
                    ends.append(raw.end())
                    resume = raw.end()
                break
            if first == "'" and start and text[start - 1] in IDENT_CHARS:
                resume = start + 1  # 1'000'000: a digit separator, not a literal
                break
            starts.append(start)
            ends.append(end)
        pos = resume
    return tokens


# Python: # comments, '''/""" strings (finished by hand), '...'/"..." strings.
_PY_TOKEN = re.compile(
    r"#[^\n]*|'''|\"\"\"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'|\"[^\"\\\n]*(?:\\.[^\"\\\n]*)*\"",
    re.S,
)


def _triple_end(text: str, start: int, quote: str) -> int:
    """End of the triple-quoted string opened at ``start`` (-1 if it is never closed)."""
    pos = start + 3
    while True:
        at = text.find(quote, pos)
        if at < 0:
            return -1
        back = at
        while back > pos and text[back - 1] == "\\":
            back -= 1
        if (at - back) % 2 == 0:  # not escaped
            return at + 3
        pos = at + 1


def lex_python(text: str) -> Tokens:
    tokens = Tokens(text, python=True)
    starts, ends = tokens.starts, tokens.ends
    pos: int | None = 0
    while pos is not None:
        resume = None  # after triple quotes, finished by hand: search again from there
        for m in _PY_TOKEN.finditer(text, pos):
            start, end = m.span()
            triple = end - start == 3 and text[start] != "#"
            if triple and text[start] == text[start + 1] == text[start + 2]:
                end = _triple_end(text, start, text[start : start + 3])
                if end < 0:  # never closed: runs to the end of the file
                    end = len(text)
                    tokens.bodies[len(starts)] = (start + 3, end)
                starts.append(start)
                ends.append(end)
                resume = end
                break
            starts.append(start)
            ends.append(end)
        pos = resume
    return tokens


class Lines:
    """Line numbers of offsets.

    Each pass of the scanner asks in increasing offset order, so lines are counted
    forward from the last answer (``str.count`` runs at C speed); a pass that starts
    over counts again from the top. No table of line starts is kept: a dense file has
    millions of lines.
    """

    __slots__ = ("_line", "_line_start", "_pos", "count", "text")

    def __init__(self, text: str):
        self.text = text
        self.count = text.count("\n") + 1
        self._pos = 0
        self._line = 1
        self._line_start = 0

    def __len__(self) -> int:
        return self.count

    def locate(self, offset: int) -> tuple[int, int]:
        """(line, column), both from 1, of ``offset``."""
        if offset < self._pos:
            if offset >= self._line_start:  # back, but on the same line
                self._pos = offset
                return self._line, offset - self._line_start + 1
            self._pos, self._line, self._line_start = 0, 1, 0  # a new pass: count again
        text = self.text
        newlines = text.count("\n", self._pos, offset)
        if newlines:
            self._line += newlines
            self._line_start = text.rfind("\n", self._pos, offset) + 1
        self._pos = offset
        return self._line, offset - self._line_start + 1
