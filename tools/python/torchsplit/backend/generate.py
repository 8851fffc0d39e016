"""A new backend's files: a renamed copy of a template, or a derivation of a CUDA backend.

Nothing here writes to the checkout until :func:`install`: files are rendered
in memory, staged and formatted in a scratch directory (verify.py builds them
from there), and only then written into ``third_device/`` whole (a sibling
directory renamed into place), with a derived backend's central entries
(policy_edit.py: the layering policy's DERIVED_BACKENDS and TOOLKITS,
MODULE.bazel's toolkit visibility). :func:`uninstall` undoes exactly that.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from torchsplit.backend import naming, policy_edit
from torchsplit.errors import TorchsplitError

POLICY = policy_edit.POLICY

# Build outputs and caches a template directory may hold; never copied.
_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".ruff_cache"}
# A label of another repository: the template needs a toolkit (@rules_cuda, @local_hip...).
_EXTERNAL = re.compile(r'"@([A-Za-z0-9_]+)//')
# The template describes itself as "an emulated accelerator"; a copy is the
# vendor's device (its driver files keep saying what they still emulate).
_IDENTITY = [
    ("an emulated accelerator", "the {device} accelerator"),
    ("emulated accelerator", "{device} accelerator"),
]


@dataclass(frozen=True)
class Derivation:
    """A backend derived from `parent` by `translation`, modelled on `model`'s hand-written part."""

    parent: str  # torch_cuda
    translation: str  # hip
    model: naming.BackendNames  # torch_hip's names
    via: tuple[str, ...]  # the translation rule kinds (DERIVED_BACKENDS)


def check_template(
    root: Path, template: str, derived: dict[str, tuple[str, tuple[str, ...]]]
) -> None:
    """Refuses, before anything is written, a template whose copy could not stand alone."""
    build = (root / "third_device" / template / "BUILD.bazel").read_text(encoding="utf-8")
    if template in derived:
        parent = derived[template][0]
        raise TorchsplitError(
            f"{template} is derived from {parent} (DERIVED_BACKENDS in {POLICY}): a copy would "
            f"duplicate the derivation under another name; derive from the parent instead: "
            f"--from {parent} --translate hip"
        )
    toolkits = sorted(set(_EXTERNAL.findall(build)))
    if toolkits:
        children = sorted(d for d, (p, _) in derived.items() if p == template)
        how = (
            f"derive from it instead: --from {template} --translate hip ({', '.join(children)} is "
            "derived so)"
            if children
            else "copy torch_emu, which needs no toolkit"
        )
        raise TorchsplitError(
            f"{template} builds against a toolkit ({', '.join('@' + t for t in toolkits)}): a "
            f"renamed copy would fork its code and name repositories and libraries that do not "
            f"exist under the new name; {how}; nothing was written"
        )


def find_derivation(
    root: Path, parent: str, translation: str, derived: dict[str, tuple[str, tuple[str, ...]]]
) -> Derivation:
    """The in-tree backend derived from `parent` that a new derivation is modelled on."""
    models = [
        d for d, (p, via) in sorted(derived.items()) if p == parent and "hipify_sources" in via
    ]
    if translation != "hip" or not models:
        raise TorchsplitError(
            f"--translate {translation}: no backend in DERIVED_BACKENDS ({POLICY}) derives from "
            f"{parent} by hipify_sources to model a new derivation on (torch_hip derives from "
            "torch_cuda); nothing was written"
        )
    model = models[0]
    if not (root / "third_device" / model / "BUILD.bazel").is_file():
        raise TorchsplitError(f"the model derivation third_device/{model} is missing")
    return Derivation(parent, translation, naming.read_derived(root, model), derived[model][1])


def _files(base: Path) -> list[tuple[str, str]]:
    out = []
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(base)
        if not path.is_file() or _SKIP_DIRS & set(rel.parts) or path.suffix in (".pyc", ".so"):
            continue
        try:
            out.append((str(rel), path.read_text(encoding="utf-8")))
        except UnicodeDecodeError as exc:
            raise TorchsplitError(f"template file is not UTF-8 text: {exc}", str(path)) from exc
    return out


def render(root: Path, template: naming.BackendNames, new: naming.BackendNames) -> dict[str, str]:
    """New relative path -> text, for every file of the template, renamed."""
    rules = naming.renames(template, new)
    files: dict[str, str] = {}
    for rel, text in _files(root / "third_device" / template.package):
        text = naming.apply(text, rules)
        for old, replacement in _IDENTITY:
            text = text.replace(old, replacement.format(device=new.device))
        files[naming.apply(rel, rules)] = text
    return files


def render_derived(root: Path, derivation: Derivation, new: naming.BackendNames) -> dict[str, str]:
    """A derived backend: the model's hand-written part under the new names, new RENAMES.

    The model (torch_hip) names its own package and extension in its files; the
    parent's names reach the new backend only through the translation, whose
    renames (RENAMES in build_variables.bzl) are the new backend's.
    """
    model = derivation.model
    renames = {model.package: new.package, model.extension: new.extension}
    renames[model.package.upper()] = new.package.upper()
    files = {
        naming.rename_once(rel, renames): naming.rename_once(text, renames)
        for rel, text in _files(root / "third_device" / model.package)
    }
    block = re.compile(r"^RENAMES = \{\n.*?^\}\n", re.MULTILINE | re.DOTALL)
    variables = files["build_variables.bzl"]
    if len(block.findall(variables)) != 1:
        raise TorchsplitError(f"third_device/{model.package}/build_variables.bzl: no RENAMES dict")
    entries = "".join(
        f'    "{k}": "{v}",\n' for k, v in sorted(derived_renames(root, derivation, new).items())
    )
    files["build_variables.bzl"] = block.sub(lambda _: "RENAMES = {\n" + entries + "}\n", variables)
    return files


def derived_renames(root: Path, derivation: Derivation, new: naming.BackendNames) -> dict[str, str]:
    """The translation's renames: every name of the parent's becomes the new backend's."""
    parent = naming.read_template(root, derivation.parent)
    camel = "".join(part.capitalize() for part in new.device.split("_"))
    out = {
        parent.device.upper(): new.device.upper(),
        parent.device.capitalize(): camel,
        parent.device: new.device,
    }
    # Spelled out only where the device name alone does not give them.
    if naming.rename_once(parent.extension, out) != new.extension:
        out[parent.extension] = new.extension
    if naming.rename_once(parent.package, out) != new.package:
        out[parent.package] = new.package
    return out


def stage(files: dict[str, str], package: str) -> Path:
    """Writes the files under a scratch root (``<scratch>/third_device/<package>/``)."""
    scratch = Path(tempfile.mkdtemp(prefix=f"torchsplit-new-backend-{package}-"))
    base = scratch / "third_device" / package
    for rel, text in sorted(files.items()):
        dest = base / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text, encoding="utf-8")
    return scratch


def read_back(scratch: Path, package: str) -> dict[str, str]:
    base = scratch / "third_device" / package
    return {
        str(p.relative_to(base)): p.read_text(encoding="utf-8")
        for p in sorted(base.rglob("*"))
        if p.is_file()
    }


def install(
    root: Path, package: str, files: dict[str, str], edits: Mapping[str, str]
) -> tuple[list[str], dict[str, str | None]]:
    """Writes the backend (whole, renamed into place), then the central files `edits` names
    (a derived backend's policy entries, MODULE.bazel): the paths changed, and the earlier
    texts for :func:`uninstall`. A failure part-way undoes what was written."""
    target = write_backend(root, package, files)
    try:
        old = policy_edit.apply(root, edits)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    return [f"third_device/{package}/", *edits], old


def uninstall(root: Path, package: str, old: Mapping[str, str | None]) -> None:
    """Undoes :func:`install`: the backend removed, the central files' earlier texts restored."""
    shutil.rmtree(root / "third_device" / package, ignore_errors=True)
    policy_edit.restore(root, old)


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
        # The project's settings, and the new package as first-party: it is not in
        # third_device/ yet, where the settings' `src` glob would find it.
        settings = ["--no-cache", f"--config=lint.isort.known-first-party = ['{target.name}']"]
        if (root / "pyproject.toml").exists():
            settings.append(f"--config={root / 'pyproject.toml'}")
        _run(
            [*ruff, "check", *settings, "--quiet", "--fix", "--select", "I", *python],
            root,
            "ruff check",
        )
        _run([*ruff, "format", *settings, "--quiet", *python], root, "ruff format")
        ran.append(f"ruff ({len(python)} files)")
    return ran


def _run(args: list[str], cwd: Path, what: str) -> None:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise TorchsplitError(f"{what} failed on the new backend:\n{proc.stderr or proc.stdout}")
