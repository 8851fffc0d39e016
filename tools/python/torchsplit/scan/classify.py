"""What one vendor token is: the category, message and families of an identifier, a
string literal or an include, in C/C++/CUDA or in Python.

Callers hand over the whole file text and the token's bounds; context (``::`` before,
``(`` after, the macros the file itself defines) is read from the text around it.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Mapping

from torchsplit import vendors
from torchsplit.scan.words import API, COMPILER_MACRO, families_of, vendor_words

Hit = tuple[str, str, tuple[str, ...]]  # (category, message, families)
Add = Callable[..., None]

TORCH_ROOTS = frozenset(("ATen", "c10", "torch", "caffe2", "THC", "aten", "THCUNN"))

_DEVICE_WORD = {w: fam for fam, ws in vendors.DEVICE_TYPE_WORDS.items() for w in ws}
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# Torch's enums of devices and dispatch keys (never Float32Backend::, SDPBackend::).
_DEVICE_QUALIFIER = re.compile(
    r"(?<![\w])(?:DeviceType|DispatchKey|Backend|BackendComponent)\s*::\s*\Z"
)
_SETTING_QUALIFIER = re.compile(r"(?<![\w])(?:" + "|".join(vendors.SETTING_ENUMS) + r")\s*::\s*\Z")
_PY_DEVICE_QUALIFIER = re.compile(r"(?<![\w])(?:DeviceType|DispatchKey|BackendComponent)\.\Z")
_IS_DEVICE = re.compile(r"is_(?:cuda|hip)\Z")
_SETTING = re.compile(rf"(?:{vendors.VENDOR_SETTING_REGEX})\Z")
_TORCH_SUFFIX = re.compile(vendors.TORCH_MACRO_SUFFIX_REGEX)
_TORCH_IN_SDK = re.compile(rf"(?:{vendors.TORCH_MACRO_IN_SDK_PREFIX_REGEX})\Z")
_SDK_MACRO = [(fam, re.compile(rf"(?:{rx})\Z")) for fam, rx in vendors.SDK_MACRO_REGEX.items()]
_SDK_NAMESPACE = {ns: fam for fam, names in vendors.SDK_NAMESPACES.items() for ns in names}
_NEXT_IS_CALL = re.compile(r"[ \t]*\(")
_NEXT_IS_ATTRIBUTE = re.compile(r"[ \t]*\.")
_SPACE = re.compile(r"\s")
_PY_IMPORT = re.compile(r"(?:^|\n)[ \t]*(?:from|import)[ \t]+\Z")
_SDK_PY_MODULE = {m: f for f, ms in vendors.SDK_PYTHON_MODULES.items() for m in ms}
_BACKEND_PIECES = frozenset(("cuda", "hip"))
_SNAKE = re.compile(r"_*[a-z][a-z0-9]*(?:_[A-Za-z0-9]+)+_*\Z")
_NEXT_IS_SCOPE = re.compile(r"[ \t]*::")
_BEFORE_SCOPE = re.compile(r"\w::[ \t]*\Z")  # at_cuda_detail::cub, not return ::thrust

# Python: torch's vendor modules, reached through the attribute before the identifier.
_PY_TORCH_PREFIX = re.compile(r"(?<![\w.])torch\.(?:backends\.|version\.|_C\.)?\Z")
_DEVICE_STRING = re.compile(r"(?P<w>cuda|hip)(?::(?:\d+|\{[^{}]*\}|%d|)?)?")
_TORCH_NAME_STRING = re.compile(
    r"torch\.(?:cuda|backends\.\w+|version\.(?:cuda|hip)|_C\._\w+)(?:\.\w+)*"
)


def _fams(ident: str) -> tuple[str, ...]:
    return families_of(ident) or ("cuda",)


def _device_fams(ident: str) -> tuple[str, ...]:
    return tuple(sorted({fam for w, fam in _DEVICE_WORD.items() if w in _CAMEL.findall(ident)}))


class FileNames:
    """What one C/C++ file itself says about its all-caps names."""

    def __init__(self, text: str, defined: frozenset[str]):
        self.text = text
        self.defined = defined  # names the file #defines
        self._constants: frozenset[str] | None = None

    def is_constant(self, name: str) -> bool:
        """Whether the file declares ``name`` as a variable (``constexpr int NAME = 5;``)."""
        if self._constants is None:  # one pass, only for a file with such a name
            self._constants = frozenset(_CONSTANT.findall(self.text))
        return name in self._constants


# A declaration of an all-caps variable: constexpr int NAME = 5; static std::vector<T> NAME{..
_CONSTANT = re.compile(
    r"(?:constexpr|const|static)\b[^;=(){}\n]*?\b([A-Z][A-Z0-9]*_[A-Z0-9_]*)\s*(?:=[^=]|\{|\[)"
)


@functools.lru_cache(maxsize=1 << 16)
def _macro_kind(ident: str) -> tuple[str, str] | None:
    """What an all-caps vendor name's spelling alone says: ("torch", "") or ("sdk", family)."""
    if ident.startswith(vendors.TORCH_MACRO_PREFIXES) or _TORCH_IN_SDK.match(ident):
        return "torch", ""
    if _TORCH_SUFFIX.search(ident):
        return "torch", ""
    for fam, rx in _SDK_MACRO:  # the SDK's spelling, even where torch sets it for the SDK
        if rx.match(ident):
            return "sdk", fam
    return None


def _macro_hit(text: str, end: int, ident: str, names: FileNames) -> Hit:
    """An all-caps vendor name in C/C++: torch's macro, the SDK's, or neither."""
    fams = _fams(ident)
    if names.is_constant(ident):
        return "vendor-identifier", f"names {ident} (a constant, not a macro)", fams
    kind = _macro_kind(ident)
    if kind is not None and kind[0] == "torch":
        return "cuda-api-macro", f"uses {ident}", fams
    if kind is not None:
        return "vendor-api", f"uses {ident} (vendor SDK macro or constant)", (kind[1],)
    if ident in names.defined:
        return "cuda-api-macro", f"uses {ident} (defined in this file)", fams
    if _NEXT_IS_CALL.match(text, end):
        return "cuda-api-macro", f"uses {ident}", fams
    return "vendor-identifier", f"names {ident} (a constant, not a macro)", fams


@functools.lru_cache(maxsize=1 << 16)
def _is_setting(ident: str) -> bool:
    return _SETTING.match(ident.lstrip("_")) is not None


@functools.lru_cache(maxsize=1 << 16)
def _api_family(ident: str) -> str | None:
    for fam, rx in API:
        if rx.match(ident):
            return fam
    return None


def _is_macro_name(ident: str) -> bool:
    return "_" in ident.strip("_") and ident.upper() == ident and not ident.startswith("_")


def classify_c(
    text: str, start: int, end: int, names: FileNames, generated: bool = False
) -> Hit | None:
    """The identifier ``text[start:end]`` of C/C++/CUDA code, if it names a vendor.

    In ``generated`` code a snake_case name is an operator the generator declares.
    """
    ident = text[start:end]
    if COMPILER_MACRO.fullmatch(ident):
        return "cuda-compiler-macro", f"uses {ident}", (_compiler_family(ident),)
    if ident in ("kCUDA", "kHIP"):
        return "device-type-cuda", f"names {ident}", (_DEVICE_WORD[ident[1:]],)
    window = text[max(0, start - 48) : start]
    if window.rstrip().endswith("::"):  # qualified: Enum::Member or namespace::name
        qualifier = _DEVICE_QUALIFIER.search(window)
        if qualifier is not None:
            fams = _device_fams(ident)
            if fams:
                owner = qualifier.group(0).split(":")[0].strip()
                return "device-type-cuda", f"names {owner}::{ident}", fams
        setting = _SETTING_QUALIFIER.search(window)
        if setting is not None and vendor_words(ident):
            owner = setting.group(0).split(":")[0].strip()
            return "vendor-setting", f"names setting {owner}::{ident}", _fams(ident)
    if _IS_DEVICE.match(ident):
        before = window.rstrip()
        declared = before.endswith("bool")  # bool is_cuda() const: declares, tests nothing
        if before.endswith((".", "->")) or (_NEXT_IS_CALL.match(text, end) and not declared):
            return "is-cuda", f"tests {ident}", (_is_family(ident),)
    fam = _SDK_NAMESPACE.get(ident)
    if fam is not None and _NEXT_IS_SCOPE.match(text, end) and not _BEFORE_SCOPE.search(window):
        return "vendor-api", f"uses {ident}::", (fam,)
    if _is_setting(ident):
        return "vendor-setting", f"uses setting {ident}", _fams(ident)
    words = vendor_words(ident)
    if words and _is_macro_name(ident):
        return _macro_hit(text, end, ident, names)
    api = _api_family(ident)
    if api is not None:
        return "vendor-api", f"uses {ident}", (api,)
    if words:
        fams = families_of(ident)
        if generated and _is_operator(ident):
            return "vendor-op", f"names {ident} from the operator schema", fams
        return "vendor-identifier", f"names {ident}", fams
    return None


def classify_python(
    text: str, start: int, end: int, generated: bool = False, binding_stub: bool = False
) -> tuple[str, str, tuple[str, ...], int] | None:
    """(category, message, families, offset) of the Python identifier ``text[start:end]``.

    The offset is where the finding is reported: the start of ``torch.cuda`` or ``.cuda(``
    for a use of torch's vendor modules, else the identifier's. ``binding_stub``: the file
    is a type stub of torch._C, whose private names are the extension's bindings.
    """
    ident = text[start:end]
    window = text[max(0, start - 24) : start]
    words = vendor_words(ident)
    if _is_setting(ident):
        return "vendor-setting", f"uses setting {ident}", _fams(ident), start
    torch_prefix = _PY_TORCH_PREFIX.search(window) if window.endswith(".") else None
    if torch_prefix is not None and words:
        fams = tuple(sorted(set(words.values())))
        prefix = torch_prefix.group(0)
        return "python-torch-cuda", f"uses {prefix}{ident}", fams, start - len(prefix)
    standalone = not window.endswith((".", "_"))
    after_dot = _NEXT_IS_ATTRIBUTE.match(text, end) is not None
    if standalone and ((ident.startswith("_cuda_") and not after_dot) or _is_binding(ident)):
        # torch._C's vendor bindings imported by name: _cuda_getDevice, _cusparselt
        return "python-torch-cuda", f"uses {ident}", _fams(ident), start
    fam = _SDK_PY_MODULE.get(ident)
    if fam is not None and standalone and (after_dot or _PY_IMPORT.search(window)):
        return "vendor-api", f"uses the {ident} module", (fam,), start
    if generated and words and _is_operator(ident):
        fams = tuple(sorted(set(words.values())))
        return "vendor-op", f"names {ident} from the operator schema", fams, start
    if binding_stub and standalone and ident[:1] == "_" and words:
        # a stub of torch._C (torch/_C/*.pyi) declares the extension's vendor bindings
        return "python-torch-cuda", f"declares torch._C binding {ident}", _fams(ident), start
    if ident == "cuda" and window.endswith(".") and _NEXT_IS_CALL.match(text, end):
        return "python-torch-cuda", "uses .cuda(", ("cuda",), start - 1
    qualifier = _PY_DEVICE_QUALIFIER.search(window) if window.endswith(".") else None
    if qualifier is not None:
        fams = _device_fams(ident)
        if fams:
            return "device-type-cuda", f"names {qualifier.group(0)}{ident}", fams, start
    if _IS_DEVICE.match(ident) and window.rstrip().endswith("."):
        return "is-cuda", f"tests {ident}", (_is_family(ident),), start
    api = None if _is_macro_name(ident) else _api_family(ident)  # Python has no SDK macros
    if api is not None:
        return "vendor-api", f"uses {ident}", (api,), start
    if words:
        return "vendor-identifier", f"names {ident}", families_of(ident), start
    return None


def _is_binding(ident: str) -> bool:
    """``_cusparselt``, ``_nvtx``: a torch._C submodule named after one vendor library."""
    if ident[:1] != "_" or ident[1:2] == "_":
        return False
    name = ident[1:]
    words = vendor_words(name)
    return len(words) == 1 and "_" not in name and name.lower().startswith(next(iter(words)))


def _is_operator(ident: str) -> bool:
    """A generated snake_case name of an operator (``_cudnn_rnn``), not of a backend kernel.

    native_functions.yaml names a backend's kernels after the op and the backend
    (``masked_fill__cuda``, ``linspace_cuda_out``): a core header declaring those is
    coupled to the backend. Operators are named after libraries (``cudnn_convolution``).
    """
    if not _SNAKE.match(ident):
        return False
    pieces = ident.strip("_").split("_")
    if any(piece.lower() in _BACKEND_PIECES for piece in pieces):  # linspace_cuda_out
        return False
    return not vendor_words(pieces[-1])


def _compiler_family(ident: str) -> str:
    return "rocm" if ident.startswith("__HIP") else "cuda"


def _is_family(ident: str) -> str:
    return "rocm" if ident.endswith("hip") else "cuda"


def squash(text: str, width: int = 100) -> str:
    out = " ".join(text.split())
    return out if len(out) <= width else out[: width - 3] + "..."


def classify_string(content: str, words: Mapping[str, str] | None = None) -> Hit | None:
    """A string literal's contents: a device string, a library, a torch.cuda name, words.

    ``words`` are the content's vendor words when the caller already has them.
    """
    m = _DEVICE_STRING.fullmatch(content)
    if m is not None:
        fam = "rocm" if m.group("w") == "hip" else "cuda"
        return "cuda-device-string", f'device string "{content}"', (fam,)
    fam = vendors.library_family(content) if "lib" in content else None
    if fam is not None and not _SPACE.search(content.strip()):  # a name or path, not prose
        return "dlopen", f'names vendor library "{squash(content, 60)}"', (fam,)
    if words is None:
        words = vendor_words(content)
    if not words:
        return None
    fams = tuple(sorted(set(words.values())))
    named = _TORCH_NAME_STRING.fullmatch(content.strip())
    if named is not None:
        return "python-torch-cuda", f"string names {squash(content, 80)}", fams
    return "cuda-mention", f"string mentions {', '.join(list(words)[:6])}", fams


IncludeHit = tuple[str, str, tuple[str, ...], str]


def classify_include(target: str, quoted: bool, path: str) -> IncludeHit | None:
    """(category, message, families, resolved path) of an ``#include``, if it is a vendor's."""
    relative = quoted and target.startswith(("./", "../"))
    return _classify_include(target, quoted, os.path.dirname(path) if relative else None)


@functools.lru_cache(maxsize=1 << 14)
def _classify_include(target: str, quoted: bool, directory: str | None) -> IncludeHit | None:
    """Cached: most files include the same few hundred headers."""
    resolved = target
    if directory is not None:
        resolved = os.path.normpath(os.path.join(directory, target)).replace(os.sep, "/")
    shown = target if resolved == target else f"{target} (= {resolved})"
    head = resolved.split("/", 1)[0]
    backend = vendors.move_family(resolved)
    if backend is not None and (head in TORCH_ROOTS or resolved != target or quoted):
        message = f"includes backend header {shown} ({backend[1]})"
        return "backend-include", message, (backend[0],), resolved
    if resolved.startswith("ATen/ops/") and vendor_words(resolved[9:]):
        name = resolved[9:].split(".", 1)[0]
        fams = tuple(sorted(set(vendor_words(name).values())))
        return "vendor-op", f"includes the declaration of operator {name}", fams, resolved
    words = vendor_words(target)
    if words:
        kind = "vendor-named torch header" if head in TORCH_ROOTS else "vendor header"
        fams = tuple(sorted(set(words.values())))
        return "cuda-include", f"includes {kind} <{target}>", fams, resolved
    fam = _SDK_NAMESPACE.get(head)
    if fam is not None and "/" in resolved:  # <cute/tensor.hpp>, <ck/ck.hpp>
        return "cuda-include", f"includes vendor header <{target}>", (fam,), resolved
    return None
