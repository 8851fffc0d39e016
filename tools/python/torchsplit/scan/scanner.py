"""Find CUDA couplings inside C/C++/CUDA/Python source files.

Each finding has a file, line, column, category and message. Categories:

=====================  ==============================================================
use-cuda-guard         ``#if``/``#ifdef``/``#elif`` on USE_CUDA, USE_ROCM or another CUDA
                       build flag/version macro; ``span`` is the guarded branch
cuda-compiler-macro    ``__CUDACC__``/``__CUDA_ARCH__``/``__NVCC__``/``__HIPCC__`` (with span
                       when used in a conditional)
cuda-api-macro         ``TORCH_CUDA_CPP_API``, ``TORCH_CUDA_CU_API``, ``C10_CUDA_CHECK``,
                       ``AT_CUDA_CHECK``, ``C10_CUDA_KERNEL_LAUNCH_CHECK``...
is-cuda                ``is_cuda()`` / ``.is_cuda``
device-type-cuda       ``kCUDA``, ``DeviceType::CUDA``, ``DispatchKey::CUDA``...
cuda-device-string     a string literal ``"cuda"`` or ``"cuda:N"``
cuda-include           ``#include`` of a CUDA header (cuda_runtime.h, ATen/cuda/..., cub/...)
moved-include          ``#include`` of a file that moves to third_device (from one that stays)
python-torch-cuda      ``torch.cuda``, ``torch.backends.cudnn``, ``_cuda_*``, ``.cuda()``
cuda-mention           any other CUDA word in code or in a string literal
comment-mention        a CUDA word in a comment (core/ forbids even these)
=====================  ==============================================================

Matches inside comments and string literals never count for the code categories;
comments are reported only as ``comment-mention`` and strings only as
``cuda-device-string``/``cuda-mention``.
"""

from __future__ import annotations

import bisect
import io
import os
import re
import tokenize
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

CATEGORIES: dict[str, str] = {
    "use-cuda-guard": "preprocessor conditional on a CUDA/ROCm build flag",
    "cuda-compiler-macro": "__CUDACC__/__CUDA_ARCH__/__NVCC__/__HIPCC__",
    "cuda-api-macro": "CUDA export/check macro",
    "is-cuda": "is_cuda() test",
    "device-type-cuda": "CUDA device type or dispatch key",
    "cuda-device-string": '"cuda" device string',
    "cuda-include": "include of a CUDA header",
    "moved-include": "include of a file that moves to third_device",
    "python-torch-cuda": "torch.cuda / _cuda_* use in Python",
    "cuda-mention": "other CUDA word in code or a string",
    "comment-mention": "CUDA word in a comment",
}

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

CUDA_WORD = re.compile(
    r"^(cuda\w*|cudnn\w*|nccl\w*|nvshmem\w*|cusparse\w*|cublas\w*|cusolver\w*|cufft\w*|"
    r"curand\w*|cudss\w*|cutlass\w*|nvrtc|nvtx\w*|cupti|thc\w*|nvcc|rocm)$"
)
_TRIGGERS = (
    "cuda",
    "rocm",
    "nccl",
    "cudnn",
    "nvshmem",
    "cusparse",
    "cublas",
    "cusolver",
    "cufft",
    "curand",
    "cudss",
    "cutlass",
    "thc",
    "nvtx",
    "nvrtc",
    "cupti",
    "nvcc",
    "hipcc",
    "thrust",
    "cub/",
    "cub.",
)


def has_trigger(text: str) -> bool:
    """Cheap superset test: can ``text`` contain any finding at all?"""
    low = text.lower()
    return any(word in low for word in _TRIGGERS)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

_C_LEX = re.compile(
    r"(?P<lc>//[^\n]*)"
    r"|(?P<bc>/\*.*?(?:\*/|\Z))"
    r'|(?P<raw>\bR"(?P<delim>[^()\\\s"]{0,16})\(.*?\)(?P=delim)")'
    r'|(?P<str>(?:\b(?:u8|u|U|L))?"(?:\\.|[^"\\\n])*")'
    r"|(?P<chr>(?<![A-Za-z0-9_])'(?:\\.|[^'\\\n]){1,8}')",
    re.S,
)
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(?P<kw>[a-z_]+)\b(?P<rest>.*)$")
_INCLUDE = re.compile(
    r'^[ \t]*#[ \t]*(?:include|include_next|import)[ \t]*[<"](?P<path>[^>"]+)[>"]'
)
_COMPILER_MACRO = re.compile(
    r"\b(__CUDACC\w*__|__CUDA_ARCH\w*__|__NVCC__|__HIPCC__|__HIP_DEVICE_COMPILE__|__HIP_PLATFORM_\w+__|__CUDACC_RTC__)"
)
_API_MACRO = re.compile(
    r"\b(TORCH_CUDA_\w*API|C10_CUDA_\w+|AT_CUDA_\w+|AT_CUDNN_\w+|TORCH_CUDA\w*_CHECK\w*|"
    r"CUDA_KERNEL_ASSERT\w*|C10_CUDA_KERNEL_LAUNCH_CHECK|C10_NCCL_\w+|NCCL_CHECK\w*|"
    r"TORCH_CUDABLAS_CHECK|TORCH_CUSPARSE_CHECK|TORCH_CUSOLVER_CHECK|CUDA_CHECK\w*|"
    r"CUDNN_CHECK\w*|AT_CUDA_DRIVER_CHECK\w*|NVRTC_CHECK\w*)\b"
)
_IS_CUDA = re.compile(r"\bis_cuda\b")
_DEVICE_TYPE = re.compile(
    r"\b(kCUDA\w*|DeviceType::CUDA\w*|DispatchKey::\w*CUDA\w*|Backend::\w*CUDA\w*|"
    r"c10::kCUDA|at::kCUDA|kCUDNN)\b"
)
_PY_TORCH_CUDA = re.compile(
    r"\btorch\.cuda\b|\btorch\.backends\.(?:cuda|cudnn)\b|\b_cuda_\w+|\.cuda\s*\(|"
    r"^\s*(?:from|import)\s+torch\.cuda\b"
)
_HANDLED_DIRECTIVES = frozenset(
    ("if", "ifdef", "ifndef", "elif", "else", "endif", "include", "include_next", "import")
)
_DEVICE_STRING = re.compile(r"cuda(?::\d+)?", re.IGNORECASE)


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int
    column: int
    category: str
    message: str
    text: str = ""
    span: tuple[int, int] | None = None

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "category": self.category,
            "message": self.message,
            "text": self.text,
        }
        if self.span is not None:
            out["span"] = list(self.span)
        return out


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
        return rel_path in self.paths


def cuda_words(text: str) -> list[str]:
    words: list[str] = []
    for part in _SPLIT.split(text):
        if not part:
            continue
        candidates = [part, *_CAMEL.findall(part)]
        for word in candidates:
            lower = word.lower()
            if CUDA_WORD.match(lower) and lower not in words:
                words.append(lower)
    return words


class _Lines:
    def __init__(self, text: str):
        self.text = text
        self.starts = [0]
        self.starts.extend(m.end() for m in re.finditer("\n", text))

    def locate(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1

    def line_text(self, number: int) -> str:
        start = self.starts[number - 1]
        end = self.text.find("\n", start)
        return self.text[start : end if end >= 0 else len(self.text)]


def _squash(text: str) -> str:
    return " ".join(text.split())


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def _lex_c(text: str) -> tuple[str, list[tuple[int, str]], list[tuple[int, str]]]:
    """Masked code (comments and string contents blanked), comments, string literals."""
    pieces: list[str] = []
    comments: list[tuple[int, str]] = []
    strings: list[tuple[int, str]] = []
    last = 0
    for m in _C_LEX.finditer(text):
        pieces.append(text[last : m.start()])
        token = m.group(0)
        kind = m.lastgroup
        if kind in ("lc", "bc"):
            comments.append((m.start(), token))
            pieces.append(_blank(token))
        elif kind in ("raw", "str", "delim"):
            quote = token.index('"')
            content = token[quote + 1 : -1]
            if m.group("raw") is not None:
                delim = m.group("delim") or ""
                content = token[quote + 2 + len(delim) : -(2 + len(delim))]
            strings.append((m.start() + quote + 1, content))
            pieces.append(token[: quote + 1] + _blank(token[quote + 1 : -1]) + token[-1])
        else:  # char literal
            pieces.append(token[0] + _blank(token[1:-1]) + token[-1])
        last = m.end()
    pieces.append(text[last:])
    return "".join(pieces), comments, strings


@dataclass
class _Frame:
    line: int
    branch_line: int
    finding: int | None  # index into findings of the current branch's guard


def _condition_category(condition: str) -> str | None:
    if _COMPILER_MACRO.search(condition):
        return "cuda-compiler-macro"
    for ident in _IDENT.findall(condition):
        if ident != "defined" and cuda_words(ident):
            return "use-cuda-guard"
    return None


def scan_c_text(
    text: str, path: str, *, moved: MovedFiles | None = None, file_moves: bool = False
) -> list[Finding]:
    findings: list[Finding] = []
    lines = _Lines(text)
    code, comments, strings = _lex_c(text)
    code_lines = code.split("\n")
    claimed: set[tuple[int, int]] = set()  # (line, column) of identifiers already reported

    def add(line: int, col: int, category: str, message: str, span: tuple[int, int] | None = None):
        findings.append(
            Finding(path, line, col, category, message, lines.line_text(line).strip(), span)
        )
        return len(findings) - 1

    # Preprocessor: guards with spans, includes.
    stack: list[_Frame] = []
    directive_lines: set[int] = set()
    handled_lines: set[int] = set()
    number = 0
    while number < len(code_lines):
        start = number
        logical = code_lines[number]
        while logical.endswith("\\") and number + 1 < len(code_lines):
            number += 1
            logical = logical[:-1] + " " + code_lines[number]
        number += 1
        m = _DIRECTIVE.match(logical)
        if m is None:
            continue
        line_no = start + 1
        directive_lines.update(range(line_no, number + 1))
        kw, rest = m.group("kw"), m.group("rest")
        if kw in _HANDLED_DIRECTIVES:
            handled_lines.update(range(line_no, number + 1))
        if kw in ("if", "ifdef", "ifndef"):
            frame = _Frame(line_no, line_no, None)
            stack.append(frame)
            category = _condition_category(rest)
            if category:
                frame.finding = add(
                    line_no, 1, category, f"#{kw} {_squash(rest)} guards a block", None
                )
        elif kw in ("elif", "else", "endif"):
            if not stack:
                continue  # stray directive: tolerate, report nothing
            frame = stack[-1]
            if frame.finding is not None:
                old = findings[frame.finding]
                findings[frame.finding] = Finding(
                    old.path,
                    old.line,
                    old.column,
                    old.category,
                    f"{old.message} (lines {frame.branch_line}-{line_no})",
                    old.text,
                    (frame.branch_line, line_no),
                )
                frame.finding = None
            if kw == "endif":
                stack.pop()
                continue
            frame.branch_line = line_no
            if kw == "elif":
                category = _condition_category(rest)
                if category:
                    frame.finding = add(
                        line_no, 1, category, f"#elif {_squash(rest)} guards a block", None
                    )
        elif kw in ("include", "include_next", "import"):
            inc = _INCLUDE.match(lines.line_text(line_no))
            if inc is None:
                continue
            target = inc.group("path")
            words = cuda_words(target)
            if words or target.startswith(("cub/", "thrust/")):
                add(line_no, 1, "cuda-include", f"includes CUDA header <{target}>")
            elif moved is not None and not file_moves:
                hit = moved.match(target)
                if hit is not None:
                    add(line_no, 1, "moved-include", f"includes {target}, which moves ({hit})")
        else:
            for m2 in _COMPILER_MACRO.finditer(logical):
                add(line_no, m2.start() + 1, "cuda-compiler-macro", f"uses {m2.group(1)}")
            for m2 in _API_MACRO.finditer(logical):
                claimed.add((line_no, m2.start() + 1))
                add(line_no, m2.start() + 1, "cuda-api-macro", f"uses {m2.group(1)}")
    for frame in stack:  # unterminated conditionals: the span runs to the end of the file
        if frame.finding is not None:
            old = findings[frame.finding]
            end = len(code_lines)
            findings[frame.finding] = Finding(
                old.path,
                old.line,
                old.column,
                old.category,
                f"{old.message} (lines {frame.branch_line}-{end}, no #endif)",
                old.text,
                (frame.branch_line, end),
            )

    # Code categories, line by line on masked code (comments and strings blanked).
    specific = (
        (_API_MACRO, "cuda-api-macro", "uses {}"),
        (_COMPILER_MACRO, "cuda-compiler-macro", "uses {}"),
        (_IS_CUDA, "is-cuda", "tests {}"),
        (_DEVICE_TYPE, "device-type-cuda", "names {}"),
    )
    for index, line in enumerate(code_lines):
        line_no = index + 1
        if line_no in directive_lines or not line.strip():
            continue
        if not has_trigger(line):
            continue
        taken: list[tuple[int, int]] = []
        for regex, category, message in specific:
            for m in regex.finditer(line):
                taken.append((m.start(), m.end()))
                add(line_no, m.start() + 1, category, message.format(m.group(0)))
        for m in _IDENT.finditer(line):
            if any(a <= m.start() < b for a, b in taken):
                continue
            words = cuda_words(m.group(0))
            if words:
                add(line_no, m.start() + 1, "cuda-mention", f"names {m.group(0)}")
    # Directive lines other than guards/includes: plain mentions (e.g. #define FOO_CUDA 1).
    for line_no in sorted(directive_lines):
        if line_no in handled_lines:
            continue
        line = code_lines[line_no - 1]
        for m in _IDENT.finditer(line):
            if (line_no, m.start() + 1) in claimed or _COMPILER_MACRO.fullmatch(m.group(0)):
                continue
            if cuda_words(m.group(0)) and m.group(0) not in ("define", "undef"):
                add(line_no, m.start() + 1, "cuda-mention", f"names {m.group(0)}")

    for offset, content in strings:
        line_no, col = lines.locate(offset)
        if line_no in directive_lines and _INCLUDE.match(lines.line_text(line_no)):
            continue
        if _DEVICE_STRING.fullmatch(content):
            add(line_no, col, "cuda-device-string", f'device string "{content}"')
        elif has_trigger(content) and cuda_words(content):
            add(line_no, col, "cuda-mention", f"string mentions {', '.join(cuda_words(content))}")
    for offset, comment in comments:
        first_line, _ = lines.locate(offset)
        for delta, piece in enumerate(comment.split("\n")):
            if has_trigger(piece):
                words = cuda_words(piece)
                if words:
                    line_no = first_line + delta
                    col = offset - lines.starts[first_line - 1] + 1 if delta == 0 else 1
                    add(line_no, col, "comment-mention", f"comment mentions {', '.join(words)}")
    return findings


def scan_python_text(text: str, path: str) -> list[Finding]:
    findings: list[Finding] = []
    lines = _Lines(text)
    masked = list(text.split("\n"))
    comments: list[tuple[int, int, str]] = []
    strings: list[tuple[int, int, str]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                comments.append((tok.start[0], tok.start[1] + 1, tok.string))
            elif tok.type == tokenize.STRING:
                body = re.sub(r"^[A-Za-z]*('''|\"\"\"|'|\")", "", tok.string)
                body = re.sub(r"('''|\"\"\"|'|\")$", "", body)
                strings.append((tok.start[0], tok.start[1] + 1, body))
            else:
                continue
            (sl, sc), (el, ec) = tok.start, tok.end
            for ln in range(sl, el + 1):
                row = masked[ln - 1]
                a = sc if ln == sl else 0
                b = ec if ln == el else len(row)
                masked[ln - 1] = row[:a] + " " * (b - a) + row[b:]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # partial tokenisation: whatever was masked so far stays masked

    def add(line: int, col: int, category: str, message: str) -> None:
        findings.append(Finding(path, line, col, category, message, lines.line_text(line).strip()))

    for index, line in enumerate(masked):
        if not has_trigger(line):
            continue
        taken: list[tuple[int, int]] = []
        for regex, category in ((_PY_TORCH_CUDA, "python-torch-cuda"), (_IS_CUDA, "is-cuda")):
            for m in regex.finditer(line):
                taken.append((m.start(), m.end()))
                add(index + 1, m.start() + 1, category, f"uses {m.group(0).strip()}")
        for m in _IDENT.finditer(line):
            if any(a <= m.start() < b for a, b in taken):
                continue
            if cuda_words(m.group(0)):
                add(index + 1, m.start() + 1, "cuda-mention", f"names {m.group(0)}")
    for line_no, col, body in strings:
        if _DEVICE_STRING.fullmatch(body):
            add(line_no, col, "cuda-device-string", f'device string "{body}"')
        elif cuda_words(body):
            add(line_no, col, "cuda-mention", f"string mentions {', '.join(cuda_words(body))}")
    for line_no, col, body in comments:
        words = cuda_words(body)
        if words:
            add(line_no, col, "comment-mention", f"comment mentions {', '.join(words)}")
    return findings


def scan_file(path: str, display: str, rel: str, moved: MovedFiles | None) -> list[Finding]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError as exc:
        return [Finding(display, 0, 0, "unreadable", str(exc))]
    file_moves = moved.moves(rel) if moved is not None else False
    if not has_trigger(text):
        if moved is None or file_moves or "#include" not in text:
            return []
    if path.endswith(PY_SUFFIXES):
        found = scan_python_text(text, display)
    else:
        found = scan_c_text(text, display, moved=moved, file_moves=file_moves)
    return sorted(found)


def iter_files(roots: Iterable[str], suffixes: tuple[str, ...]) -> Iterator[str]:
    for root in roots:
        if os.path.isfile(root):
            yield root
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(
                d
                for d in dirnames
                if not d.startswith(".") and not d.startswith("bazel-") and d != "__pycache__"
            )
            for name in sorted(filenames):
                if name.endswith(suffixes):
                    yield os.path.join(dirpath, name)


def _scan_batch(args: tuple[list[tuple[str, str, str]], MovedFiles | None]) -> list[Finding]:
    batch, moved = args
    out: list[Finding] = []
    for path, display, rel in batch:
        out.extend(scan_file(path, display, rel, moved))
    return out


def scan_paths(
    roots: list[str],
    *,
    base: str = ".",
    suffixes: tuple[str, ...] = DEFAULT_SUFFIXES,
    moved: MovedFiles | None = None,
    jobs: int = 1,
) -> tuple[list[Finding], int]:
    """Scan every matching file under ``roots``; paths are shown relative to ``base``."""
    base_abs = os.path.abspath(base)
    work: list[tuple[str, str, str]] = []
    for path in iter_files(roots, suffixes):
        rel = os.path.relpath(os.path.abspath(path), base_abs).replace(os.sep, "/")
        work.append((path, rel, rel))
    findings: list[Finding] = []
    if jobs <= 1 or len(work) < 64:
        findings = _scan_batch((work, moved))
    else:
        size = max(16, len(work) // (jobs * 8))
        batches = [(work[i : i + size], moved) for i in range(0, len(work), size)]
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for part in pool.map(_scan_batch, batches):
                findings.extend(part)
    findings.sort()
    return findings, len(work)
