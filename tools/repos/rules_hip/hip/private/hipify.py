"""Translates one CUDA source file to HIP: the action behind hipify_sources.

Three steps, in this order:

1. PyTorch's own CUDA -> HIP mappings (``torch/utils/hipify/cuda_to_hip_mappings.py``
   of the torch wheel, the table PyTorch's ROCm build hipifies its sources
   with). The file is read as data: its ``collections.OrderedDict([...])``
   literals are evaluated with ``ast.literal_eval``, never executed. Only the
   CUDA API tables are used (identifiers, type names, includes, special
   names); the PyTorch-, Caffe2- and c10-specific tables rename PyTorch's own
   tree, the way ``--rename`` renames a project's. Matching is hipify's: whole
   tokens (a non-word character on each side), the longest key first.
2. A check that no CUDA API name is left: an identifier the table does not
   map (``cudaGetDriverEntryPointByVersion`` has no HIP equivalent) fails
   the action, naming the file, the line and the name, so the gap shows at
   translation rather than as a compiler error in generated code. Comments
   and string literals are not checked.
3. The project's renames (``--rename OLD=NEW``, e.g. ``torch_cuda=torch_hip``),
   plain substrings, the longest first, in one pass (hipify_sources.bzl
   renames the output path the same way). A translation unit of device code
   (``.cu`` -> ``.hip``) gains the ``#include <hip/hip_runtime.h>`` that nvcc
   includes implicitly (as hipify does).

Usage: hipify.py --mappings FILE [--rename OLD=NEW]... --origin PATH IN OUT
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

# The tables of cuda_to_hip_mappings.py that map the CUDA API (in hipify's order).
API_TABLES = ("CUDA_IDENTIFIER_MAP", "CUDA_TYPE_NAME_MAP", "CUDA_INCLUDE_MAP", "CUDA_SPECIAL_MAP")

# CUDA API names (runtime, driver, libraries) that must not survive step 1.
# ncclXxx is absent on purpose: RCCL keeps NCCL's API names.
_LEFT_OVER = re.compile(
    r"\b(cuda[A-Z]\w*|cu[A-Z][a-z]\w*|CU[a-z]\w*|CU_[A-Z0-9_]+|CUDA_SUCCESS|CUDA_ERROR_\w+"
    r"|cublas\w*|cusparse\w*|cufft\w*|curand\w*|cudnn\w*|nvrtc[A-Z]\w*|NVRTC_\w+|nvtx[A-Z]\w*)\b"
)
_DEVICE_SUFFIX = ".cu"
_RUNTIME_INCLUDE = "#include <hip/hip_runtime.h>"


class HipifyError(Exception):
    """A file cannot be translated (the message names file and line)."""


def _module_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound to a string, or to `A if _IS_FBCODE else B` (B: not fbcode)."""
    out: dict[str, str] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        value = node.value
        if isinstance(value, ast.IfExp):
            value = value.orelse  # the wheel's branch: IS_FBCODE is Meta-internal
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
            if isinstance(value.value, str):
                out[target.id] = value.value
    return out


def _literal(node: ast.expr, constants: dict[str, str]) -> object:
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e, constants) for e in node.elts)
    return ast.literal_eval(node)


def load_mappings(path: Path) -> dict[str, str]:
    """CUDA name -> HIP name from the API tables of a cuda_to_hip_mappings.py."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    constants = _module_constants(tree)
    tables: dict[str, dict[str, str]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        call = node.value
        if name not in API_TABLES or not isinstance(call, ast.Call) or not call.args:
            continue
        if not isinstance(call.args[0], ast.List):
            raise HipifyError(f"{path}: {name} is not an OrderedDict of a list literal")
        table: dict[str, str] = {}
        for element in call.args[0].elts:
            entry = _literal(element, constants)
            # Older wheels annotate entries: (cuda, (hip, kind, api[, unsupported])).
            if isinstance(entry, tuple) and len(entry) == 2:
                cuda, hip = entry
                if isinstance(hip, tuple):
                    if "HIP_UNSUPPORTED" in map(str, hip[1:]):
                        continue
                    hip = hip[0]
                if isinstance(cuda, str) and isinstance(hip, str):
                    table[cuda] = hip
        tables[name] = table
    missing = [t for t in API_TABLES if t not in tables]
    if missing:
        raise HipifyError(f"{path}: no {', '.join(missing)}: not torch.utils.hipify's mappings?")
    merged: dict[str, str] = {}
    for name in API_TABLES:
        merged.update(tables[name])  # later tables win, as in hipify_python.py
    return merged


def _alternation(keys: list[str]) -> str:
    # Longest first: at a given position the longest key that ends a token wins.
    return "|".join(re.escape(k) for k in sorted(keys, key=lambda k: (-len(k), k)))


def apply_mappings(text: str, mappings: dict[str, str]) -> str:
    pattern = re.compile(rf"(?<=\W)({_alternation(list(mappings))})(?=\W)")
    # Pad so a name at the very start or end of the file is a whole token too.
    return pattern.sub(lambda m: mappings[m.group(0)], f"\n{text}\n")[1:-1]


def _blank_comments_and_strings(text: str) -> str:
    """The text with comments and string/char literals replaced by spaces (newlines kept)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        two = text[i : i + 2]
        if two == "//":
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif two == "/*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif text[i] in "\"'":
            quote, end = text[i], i + 1
            while end < n and text[end] != quote and text[end] != "\n":
                end += 2 if text[end] == "\\" else 1
            end = min(end + 1, n)
        else:
            out.append(text[i])
            i += 1
            continue
        out.append("".join(c if c == "\n" else " " for c in text[i:end]))
        i = end
    return "".join(out)


def left_over_api(text: str) -> list[tuple[int, str]]:
    """(line, name) of every CUDA API name left in code (not comments or strings)."""
    code = _blank_comments_and_strings(text)
    found: list[tuple[int, str]] = []
    for number, line in enumerate(code.splitlines(), start=1):
        found.extend((number, m.group(1)) for m in _LEFT_OVER.finditer(line))
    return found


def apply_renames(text: str, renames: dict[str, str]) -> str:
    if not renames:
        return text
    pattern = re.compile(_alternation(list(renames)))
    return pattern.sub(lambda m: renames[m.group(0)], text)


def translate(text: str, origin: str, mappings: dict[str, str], renames: dict[str, str]) -> str:
    hip = apply_mappings(text, mappings)
    left = left_over_api(hip)
    if left:
        lines = [f"  {origin}:{line}: {name}" for line, name in left]
        raise HipifyError(
            f"{origin}: {len(left)} CUDA API name(s) have no HIP mapping in torch.utils.hipify:\n"
            + "\n".join(lines)
            + "\nReplace the file by hand in the derived backend (its `replaced` list, with the "
            "reason), or avoid the call in the original."
        )
    hip = apply_renames(hip, renames)
    note = f"Generated by hipify_sources from {origin}: edit that file, not this one."
    header = _comment(origin, note) + "\n"
    if origin.endswith(_DEVICE_SUFFIX) and _RUNTIME_INCLUDE not in hip:
        header += _RUNTIME_INCLUDE + "  // nvcc includes the runtime implicitly; hipcc does not\n"
    return header + hip


def _comment(path: str, text: str) -> str:
    """`text` as a one-line comment in the language of `path`."""
    if path.endswith(".py"):
        return f"# {text}"
    if path.endswith(".lds"):
        return f"/* {text} */"
    return f"// {text}"


def _rename(value: str) -> tuple[str, str]:
    old, sep, new = value.partition("=")
    if not sep or not old:
        raise argparse.ArgumentTypeError(f"--rename wants OLD=NEW, got {value!r}")
    return old, new


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mappings", required=True, type=Path)
    parser.add_argument("--rename", action="append", type=_rename, default=[])
    parser.add_argument("--origin", required=True, help="the input's path, for messages")
    parser.add_argument("input", type=Path)
    parser.add_argument("output", type=Path)
    args = parser.parse_args(argv)
    try:
        mappings = load_mappings(args.mappings)
        text = args.input.read_text(encoding="utf-8")
        result = translate(text, args.origin, mappings, dict(args.rename))
    except (HipifyError, SyntaxError, ValueError, OSError) as error:
        print(f"hipify_sources: error: {error}", file=sys.stderr)
        return 1
    args.output.write_text(result, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
