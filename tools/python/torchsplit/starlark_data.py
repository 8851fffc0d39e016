"""Policy files written as plain Starlark data (no load, no function), read from Python.

starlark-pyo3 evaluates them; nothing is ``exec``ed. Used by the pipeline policy
(tools/layering/pipelines.bzl); its values come back as plain lists, dicts and strings.
"""

from __future__ import annotations

from pathlib import Path

import starlark as sl

from torchsplit.errors import TorchsplitError


def load_globals(path: str | Path, names: tuple[str, ...]) -> dict[str, object]:
    """The named top-level values of a Starlark data file."""
    where = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise TorchsplitError(f"cannot read: {exc.strerror}", where) from exc
    module = sl.Module()
    try:
        ast = sl.parse(where, text, sl.Dialect.extended())
        sl.eval(module, ast, sl.Globals.standard())
        return {name: module[name] for name in names}
    except sl.StarlarkError as exc:
        raise TorchsplitError(f"cannot evaluate: {exc}", where) from exc
    except KeyError as exc:
        raise TorchsplitError(f"does not define {exc}", where) from exc
