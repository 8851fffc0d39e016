"""Which side of a vendor conditional each ``#if``/``#elif``/``#else`` branch is.

A branch is the *CUDA side* when it can only be compiled with CUDA: its condition,
together with the negation of every earlier branch's, cannot hold once every CUDA term
is false. The condition is parsed (``defined``, ``!``, ``&&``, ``||``, parentheses;
anything else is an opaque term), so negation counts wherever it sits:
``defined(__aarch64__) && !defined(__CUDACC__)`` is not the CUDA side, and the
``#else`` of ``#ifndef USE_CUDA`` is.

A term naming a vendor is false when that vendor is absent, except a comparison an
undefined macro (0) satisfies (``CUDA_VERSION < 12000``): that one stays free.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass

from torchsplit.scan.words import COMPILER_MACRO, vendor_words

_TOKEN = re.compile(r"\s*(?:(&&|\|\|)|(!=|==|<=|>=|<<|>>)|(!)|([()])|([A-Za-z_]\w*)|(\S))")
_FREE_WHEN_UNDEFINED = re.compile(r"(?<![<>=!])<(?![<=])|<=|==\s*0\b|!=\s*[1-9]")
MAX_TERMS = 12  # beyond this many distinct terms a branch is labelled from its own terms


@dataclass(frozen=True)
class Term:
    text: str
    families: frozenset[str]
    vendor: bool  # false whenever one of its families is absent


# An expression: ("term", Term) | ("not", e) | ("and", a, b) | ("or", a, b) | ("true",)
Expr = tuple


def _term(text: str) -> Expr:
    families: set[str] = set()
    for ident in re.findall(r"[A-Za-z_]\w*", text):
        if ident == "defined":
            continue
        if COMPILER_MACRO.fullmatch(ident):
            families.add("rocm" if ident.startswith("__HIP") else "cuda")
        else:
            families.update(vendor_words(ident).values())
    vendor = bool(families) and not _FREE_WHEN_UNDEFINED.search(text)
    return ("term", Term(" ".join(text.split()), frozenset(families), vendor))


class _Parser:
    def __init__(self, text: str):
        self.tokens: list[str] = [m.group(0).strip() for m in _TOKEN.finditer(text)]
        self.tokens = [t for t in self.tokens if t]
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def expr(self) -> Expr:
        left = self.conj()
        while self.peek() == "||":
            self.take()
            left = ("or", left, self.conj())
        return left

    def conj(self) -> Expr:
        left = self.unary()
        while self.peek() == "&&":
            self.take()
            left = ("and", left, self.unary())
        return left

    def unary(self) -> Expr:
        if self.peek() == "!":
            self.take()
            return ("not", self.unary())
        return self.primary()

    def primary(self) -> Expr:
        token = self.peek()
        if token is None:
            raise ValueError("empty term")
        if token == "(":
            start = self.pos
            self.take()
            inner = self.expr()
            if self.peek() != ")":
                raise ValueError("unbalanced")
            self.take()
            if self.peek() in (None, "&&", "||", ")"):
                return inner
            self.pos = start  # "(A) >= 5": the whole comparison is one term
        if token == "defined":
            self.take()
            if self.peek() == "(":
                self.take()
                name = self.take()
                if self.peek() == ")":
                    self.take()
            else:
                name = self.take()
            return _term(f"defined({name})")
        # An opaque term: tokens up to && / || / an unmatched ')', calls kept whole.
        parts: list[str] = []
        depth = 0
        while (token := self.peek()) is not None:
            if depth == 0 and token in ("&&", "||", ")"):
                break
            if token == "(":
                depth += 1
            elif token == ")":
                depth -= 1
            parts.append(self.take())
        if not parts:
            raise ValueError("empty term")
        return _term(" ".join(parts))


def parse(kw: str, rest: str) -> Expr:
    """The condition of one branch (``#else`` is always true)."""
    rest = rest.strip()
    if kw == "else":
        return ("true",)
    if kw in ("ifdef", "ifndef"):
        name = rest.split()[0] if rest.split() else ""
        term = _term(f"defined({name})")
        return ("not", term) if kw == "ifndef" else term
    parser = _Parser(rest)
    try:
        expr = parser.expr()
        if parser.peek() is not None:
            raise ValueError("trailing tokens")
        return expr
    except (ValueError, IndexError):
        return _term(rest)  # unparseable: one opaque term


def _terms(expr: Expr, out: dict[str, Term]) -> None:
    if expr[0] == "term":
        out.setdefault(expr[1].text, expr[1])
    elif expr[0] in ("not", "and", "or"):
        for sub in expr[1:]:
            _terms(sub, out)


def _eval(expr: Expr, values: dict[str, bool]) -> bool:
    kind = expr[0]
    if kind == "term":
        return values[expr[1].text]
    if kind == "not":
        return not _eval(expr[1], values)
    if kind == "and":
        return _eval(expr[1], values) and _eval(expr[2], values)
    if kind == "or":
        return _eval(expr[1], values) or _eval(expr[2], values)
    return True


def _satisfiable(expr: Expr, terms: dict[str, Term], absent: frozenset[str]) -> bool:
    """Whether ``expr`` can hold when every vendor term of a family in ``absent`` is false."""
    fixed = {t: False for t, term in terms.items() if term.vendor and term.families & absent}
    free = [t for t in terms if t not in fixed]
    for bits in itertools.product((False, True), repeat=len(free)):
        values = dict(fixed)
        values.update(zip(free, bits, strict=True))
        if _eval(expr, values):
            return True
    return False


def side(expr: Expr) -> str:
    """ "CUDA side", "ROCm side", "CUDA+ROCm side" or "other" for one effective condition."""
    terms: dict[str, Term] = {}
    _terms(expr, terms)
    if len(terms) > MAX_TERMS:
        return "other"
    if _satisfiable(expr, terms, frozenset(("cuda", "rocm"))):
        return "other"
    needs_cuda = not _satisfiable(expr, terms, frozenset(("cuda",)))
    needs_rocm = not _satisfiable(expr, terms, frozenset(("rocm",)))
    if needs_cuda and not needs_rocm:
        return "CUDA side"
    if needs_rocm and not needs_cuda:
        return "ROCm side"
    return "CUDA+ROCm side"


def branch_sides(branches: list[tuple[str, str]]) -> list[str]:
    """The side of each branch ``(keyword, condition)`` of one ``#if ... #endif``."""
    return list(_branch_sides(tuple(branches)))


@functools.lru_cache(maxsize=1 << 12)
def _branch_sides(branches: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """Cached: the same few conditionals (#ifdef USE_ROCM ... #else) recur in every file."""
    sides: list[str] = []
    earlier: list[Expr] = []
    for kw, rest in branches:
        own = parse(kw, rest)
        effective = own
        for previous in earlier:
            effective = ("and", effective, ("not", previous))
        sides.append(side(effective))
        earlier.append(own)
    return tuple(sides)
