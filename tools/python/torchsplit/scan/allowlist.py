"""Allowlist of accepted scan findings (TOML).

::

    [[allow]]
    path = "aten/src/ATen/cuda/**"   # glob on the finding's path; ** crosses directories
    category = "cuda-api-macro"      # a scan category, or "*"
    line = "TORCH_CUDA_CPP_API"      # optional regex searched in the finding's source line
    reason = "ATen/cuda moves to torch_cuda with its export macro"   # required

An entry that matches nothing is reported as unused so stale entries get removed.

``torchsplit scan`` applies the entries inside the scan (``scanner.Selection.allow``),
after the category/family filters and before the per-file limit.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from torchsplit.errors import TorchsplitError
from torchsplit.globs import glob_to_regex
from torchsplit.scan.scanner import CATEGORIES, Finding


@dataclass(frozen=True)
class AllowEntry:
    index: int
    path: str
    category: str
    line: re.Pattern[str] | None
    reason: str
    _path_re: re.Pattern[str]

    def matches_path(self, path: str) -> bool:
        return bool(self._path_re.match(path))

    def matches(self, finding: Finding) -> bool:
        if self.category != "*" and self.category not in finding.categories:
            return False
        if not self.matches_path(finding.path):
            return False
        return self.line is None or bool(self.line.search(finding.text))


def load_allowlist(path: str | Path) -> list[AllowEntry]:
    where = str(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TorchsplitError("allowlist file not found", where) from exc
    except tomllib.TOMLDecodeError as exc:
        raise TorchsplitError(f"invalid TOML: {exc}", where) from exc
    entries: list[AllowEntry] = []
    raw = data.get("allow", [])
    if not isinstance(raw, list):
        raise TorchsplitError("expected [[allow]] tables", where)
    for index, spec in enumerate(raw, start=1):
        if not isinstance(spec, dict):
            raise TorchsplitError(f"allow entry #{index} must be a table", where)
        unknown = set(spec) - {"path", "category", "line", "reason"}
        if unknown:
            raise TorchsplitError(f"allow entry #{index}: unknown keys {sorted(unknown)}", where)
        glob = spec.get("path")
        category = spec.get("category", "*")
        reason = spec.get("reason")
        if not isinstance(glob, str) or not glob:
            raise TorchsplitError(f'allow entry #{index} needs path = "<glob>"', where)
        if category != "*" and category not in CATEGORIES:
            raise TorchsplitError(
                f"allow entry #{index}: unknown category {category!r}; expected one of "
                f"{', '.join(CATEGORIES)} or '*'",
                where,
            )
        if not isinstance(reason, str) or not reason.strip():
            raise TorchsplitError(f"allow entry #{index} needs a reason", where)
        line = spec.get("line")
        try:
            line_re = re.compile(line) if line else None
        except re.error as exc:
            raise TorchsplitError(f"allow entry #{index}: bad line regex: {exc}", where) from exc
        entries.append(AllowEntry(index, glob, category, line_re, reason, glob_to_regex(glob)))
    return entries
