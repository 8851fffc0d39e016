"""A new backend's files join the checkout that workspace tests copy (//:all_files).

A glob in the root package cannot reach into another package, so the root
``BUILD.bazel`` names each package's ``:all_files`` (tests/suites.bzl's
workspace tests copy exactly that). Without the new backend's label there, a test
that runs Bazel on a copy of the checkout would lack the backend, and
tests/tools/test_ownership.py fails naming the package.
"""

from __future__ import annotations

import re
from pathlib import Path

from torchsplit.errors import TorchsplitError

ROOT_BUILD = "BUILD.bazel"

# A line of //:all_files' label list naming a backend's filegroup.
_BACKEND_LINE = re.compile(r'(?m)^( +)"//third_device/([A-Za-z0-9_]+):all_files",\n')


def add_backend(text: str, package: str) -> str:
    """The root BUILD text with `//third_device/PACKAGE:all_files` among the other
    backends' labels, in sorted order (buildifier's)."""
    lines = list(_BACKEND_LINE.finditer(text))
    if not lines:
        raise TorchsplitError(
            "no //third_device/<backend>:all_files label in //:all_files to add the backend beside",
            ROOT_BUILD,
        )
    if any(m.group(2) == package for m in lines):
        raise TorchsplitError(
            f"//:all_files names //third_device/{package}:all_files already: remove the "
            "stale label first",
            ROOT_BUILD,
        )
    after = [m for m in lines if m.group(2) < package]
    at = after[-1].end() if after else lines[0].start()
    indent = lines[0].group(1)
    return f'{text[:at]}{indent}"//third_device/{package}:all_files",\n{text[at:]}'


def grant(root: Path, package: str) -> dict[str, str]:
    """{root BUILD.bazel: its new text}, or nothing where the root lists no backend (a
    checkout without workspace tests)."""
    path = root / ROOT_BUILD
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if not _BACKEND_LINE.search(text):
        return {}
    return {ROOT_BUILD: add_backend(text, package)}
