"""Copy a template backend under a new name: every token renamed, written as a whole."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from torchsplit.backend import naming
from torchsplit.errors import TorchsplitError

# Build outputs and caches a template directory may hold; never copied.
_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".ruff_cache"}


def render(root: Path, template: naming.BackendNames, new: naming.BackendNames) -> dict[str, str]:
    """New relative path -> text, for every file of the template, renamed."""
    rules = naming.renames(template, new)
    base = root / "third_device" / template.package
    files: dict[str, str] = {}
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(base)
        if not path.is_file() or _SKIP_DIRS & set(rel.parts) or path.suffix in (".pyc", ".so"):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise TorchsplitError(f"template file is not UTF-8 text: {exc}", str(path)) from exc
        files[naming.apply(str(rel), rules)] = naming.apply(text, rules)
    return files


def write_backend(root: Path, package: str, files: dict[str, str]) -> Path:
    """Writes ``third_device/<package>/`` whole: staged beside it, then renamed into place.

    The target must not exist (checked before, and by the rename itself).
    """
    target = root / "third_device" / package
    staging = Path(tempfile.mkdtemp(prefix=f".{package}.", suffix=".new", dir=target.parent))
    try:
        mode = 0o777 & ~_umask()
        os.chmod(staging, mode)
        for rel, text in sorted(files.items()):
            dest = staging / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, encoding="utf-8")
        os.rename(staging, target)  # fails if target appeared meanwhile: nothing replaced
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise TorchsplitError(f"cannot write the backend: {exc}", str(target)) from exc
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def format_backend(root: Path, target: Path) -> list[str]:
    """buildifier on its Starlark files, ruff (imports, format) on its Python; what ran."""
    ran: list[str] = []
    starlark = [str(p) for p in sorted(target.rglob("*")) if p.name.endswith((".bzl", ".bazel"))]
    buildifier = root / "node_modules" / ".bin" / "buildifier"
    tool = str(buildifier) if buildifier.exists() else shutil.which("buildifier")
    config = root / ".buildifier.json"
    if tool and starlark:
        args = [tool, "-mode=fix", *([f"-config={config}"] if config.exists() else []), *starlark]
        _run(args, root, "buildifier")
        ran.append(f"buildifier ({len(starlark)} files)")
    elif starlark:
        ran.append("buildifier not found (run tools/dev bootstrap): Starlark left as copied")
    python = [str(p) for p in sorted(target.rglob("*.py"))]
    if python:
        ruff = [sys.executable, "-m", "ruff"]
        _run([*ruff, "check", "--quiet", "--fix", "--select", "I", *python], root, "ruff check")
        _run([*ruff, "format", "--quiet", *python], root, "ruff format")
        ran.append(f"ruff ({len(python)} files)")
    return ran


def _run(args: list[str], cwd: Path, what: str) -> None:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise TorchsplitError(f"{what} failed on the new backend:\n{proc.stderr or proc.stdout}")
