"""A backend's names, derived from its package name, and the tokens to rename in a copy.

A backend owns five names that must be unique in the process and the tree: its
Python package (``torch_acme``), device type (``acme``), extension
(``_ACMEC``), process-group backend (``accl``, ``--collective-name``) and
environment-variable prefix (``TORCH_ACME_``). :func:`taken_names` reads what
existing backends hold -- a derived backend's (torch_hip's) from its parent's
names and its RENAMES, since its Python comes from the translation --
:func:`renames` turns a template's names into the new ones.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from torchsplit.errors import TorchsplitError
from torchsplit.starlark_data import load_globals

_PACKAGE = re.compile(r"^[a-z][a-z0-9_]*$")
_DEVICE = re.compile(r"^[a-z][a-z0-9_]*$")
_EXTENSION = re.compile(r"^_[A-Za-z][A-Za-z0-9_]*$")
_DEVICE_TYPE = re.compile(r"""^DEVICE_TYPE\s*=\s*["']([a-z][a-z0-9_]*)["']""", re.M)
_PG_BACKEND = re.compile(r"""register_backend\(\s*["']([A-Za-z0-9_]+)["']""")
_EXTENSION_ARG = re.compile(r"""^\s*extension\s*=\s*"([A-Za-z0-9_]+)",""", re.M)
# Names core or the tests hold (cpu and tcp in core, fake and faulty in tests/backends).
RESERVED_DEVICES = ("cpu", "fake", "faulty")
RESERVED_PG = ("tcp",)
# Which option chooses another value for each kind of name.
_OPTION = {
    "package": "another NAME",
    "device type": "--device-name",
    "extension": "--extension",
    "process-group backend": "--collective-name",
    "environment prefix": "another NAME",
}


@dataclass(frozen=True)
class BackendNames:
    package: str  # torch_acme: directory under third_device/, Python package, Bazel name
    device: str  # acme
    extension: str  # _ACMEC
    pg_backend: str  # accl

    @property
    def env_prefix(self) -> str:
        return self.package.upper() + "_"

    @property
    def camel(self) -> str:
        return "".join(part.capitalize() for part in self.device.split("_"))

    def describe(self) -> str:
        return (
            f"package {self.package}, device type '{self.device}', extension {self.extension}, "
            f"process-group backend '{self.pg_backend}', environment {self.env_prefix}*"
        )


def derive(
    package: str,
    device: str | None,
    extension: str | None,
    collective: str | None = None,
    taken: dict[str, dict[str, str]] | None = None,
) -> BackendNames:
    """The names of a new backend; defaults follow torch_emu's (emu, _EMUC, eccl).

    The process-group backend defaults to ``<first letter>ccl`` (acme: accl) or,
    when another backend holds that (torch_ecu: torch_emu's eccl), to
    ``<device>ccl`` (ecuccl).
    """
    if not _PACKAGE.match(package):
        raise TorchsplitError(f"backend name {package!r} must be a lowercase identifier")
    device = device or package.removeprefix("torch_")
    if not _DEVICE.match(device):
        raise TorchsplitError(f"device name {device!r} must be a lowercase identifier")
    extension = extension or f"_{device.upper().replace('_', '')}C"
    if not _EXTENSION.match(extension):
        raise TorchsplitError(f"extension {extension!r} must be '_' and an identifier")
    if collective is None:
        held = (taken or {}).get("process-group backend", {})
        candidates = [f"{device[0]}ccl", f"{device.replace('_', '')}ccl"]
        collective = next((c for c in candidates if c not in held), candidates[0])
    elif not _DEVICE.match(collective):
        raise TorchsplitError(f"collective name {collective!r} must be a lowercase identifier")
    return BackendNames(package, device, extension, collective)


def read_template(root: Path, package: str) -> BackendNames:
    """The names a template backend uses, read from its files."""
    base = root / "third_device" / package
    if not (base / "BUILD.bazel").is_file():
        raise TorchsplitError(f"no template backend third_device/{package} (no BUILD.bazel)")
    ext = _EXTENSION_ARG.search((base / "BUILD.bazel").read_text(encoding="utf-8"))
    devices, pgs = _python_names(base)
    if ext is None or len(devices) != 1:
        raise TorchsplitError(
            f"template {package}: expected one `extension = ...` in its BUILD.bazel and one "
            f"DEVICE_TYPE in its Python package (found {sorted(devices) or 'none'})"
        )
    pg = sorted(pgs)[0] if pgs else f"{next(iter(devices))[0]}ccl"
    return BackendNames(package, next(iter(devices)), ext.group(1), pg)


def _python_names(base: Path) -> tuple[set[str], set[str]]:
    devices: set[str] = set()
    pgs: set[str] = set()
    for path in base.rglob("*.py"):
        text = path.read_text(encoding="utf-8", errors="replace")
        devices.update(_DEVICE_TYPE.findall(text))
        pgs.update(_PG_BACKEND.findall(text))
    return devices, pgs


def taken_names(root: Path) -> dict[str, dict[str, str]]:
    """kind -> name -> holder, for every backend under third_device/ (and core's own)."""
    taken: dict[str, dict[str, str]] = {
        "package": {},
        "device type": {d: "torch_core" if d == "cpu" else "tests" for d in RESERVED_DEVICES},
        "extension": {},
        "process-group backend": {p: "torch_core" for p in RESERVED_PG},
        "environment prefix": {},
    }
    for base in sorted((root / "third_device").glob("*/")):
        if not base.is_dir():
            continue
        holder = base.name
        taken["package"][holder] = holder
        taken["environment prefix"][holder.upper() + "_"] = holder
        build = base / "BUILD.bazel"
        if build.is_file():
            for ext in _EXTENSION_ARG.findall(build.read_text(encoding="utf-8")):
                taken["extension"][ext] = holder
        devices, pgs = _python_names(base)
        devices |= _derived_devices(root, base)
        for device in devices:
            taken["device type"].setdefault(device, holder)
        for pg in pgs:
            taken["process-group backend"].setdefault(pg, holder)
    return taken


def _derived_devices(root: Path, base: Path) -> set[str]:
    """A derived backend's device type: its parent's, renamed as its translation renames it."""
    variables = base / "build_variables.bzl"
    if not variables.is_file() or "TRANSLATED" not in variables.read_text(encoding="utf-8"):
        return set()
    found = load_globals(variables, ("TRANSLATED", "RENAMES"))
    parents = {p.split("/")[1] for paths in found["TRANSLATED"].values() for p in paths}  # type: ignore[attr-defined]
    renames: dict[str, str] = dict(found["RENAMES"])  # type: ignore[call-overload]
    devices: set[str] = set()
    for parent in parents:
        devices |= {
            rename_once(d, renames) for d in _python_names(root / "third_device" / parent)[0]
        }
    return devices


def rename_once(text: str, renames: dict[str, str]) -> str:
    """Substring renames, the longest first, in one pass (as rules_hip's hipify.py applies them)."""
    if not renames:
        return text
    keys = sorted(renames, key=lambda k: (-len(k), k))
    return re.sub("|".join(map(re.escape, keys)), lambda m: renames[m.group(0)], text)


def collisions(names: BackendNames, taken: dict[str, dict[str, str]]) -> list[str]:
    wanted = {
        "package": names.package,
        "device type": names.device,
        "extension": names.extension,
        "process-group backend": names.pg_backend,
        "environment prefix": names.env_prefix,
    }
    return [
        f"{kind} '{value}' is already held by {taken[kind][value]} (choose {_OPTION[kind]})"
        for kind, value in wanted.items()
        if value in taken[kind]
    ]


def renames(old: BackendNames, new: BackendNames) -> list[tuple[re.Pattern[str], str]]:
    """Ordered (pattern, replacement) pairs turning the template's tokens into the new ones.

    Whole tokens only: ``emu`` in ``torch_emu``, ``EmuDriver`` or ``emu:0`` is
    renamed, the ``emu`` of "emulated" is not.
    """
    old_camel, new_camel = old.camel, new.camel
    pairs = [
        (re.escape(old.extension), new.extension),
        (re.escape(old.package), new.package),
        (re.escape(old.package.upper()), new.package.upper()),
        (rf"(?<![A-Za-z]){re.escape(old.pg_backend)}(?![a-z])", new.pg_backend),
        (
            rf"(?<![A-Za-z]){re.escape(old.pg_backend.capitalize())}(?![a-z])",
            new.pg_backend.capitalize(),
        ),
        (rf"(?<![A-Z]){re.escape(old.pg_backend.upper())}(?![A-Z])", new.pg_backend.upper()),
        (rf"(?<![a-z]){re.escape(old.device)}(?![a-z])", new.device),
        (rf"{re.escape(old_camel)}(?![a-z])", new_camel),
        (rf"(?<![A-Z]){re.escape(old.device.upper())}(?![A-Z])", new.device.upper()),
    ]
    return [(re.compile(pattern), replacement) for pattern, replacement in pairs]


def apply(text: str, rules: list[tuple[re.Pattern[str], str]]) -> str:
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


def backend_modules(root: Path) -> list[str]:
    """BACKEND_MODULES of tools/build_defs/backend.bzl (the standard modules, in order)."""
    path = root / "tools" / "build_defs" / "backend.bzl"
    found = re.search(r"^BACKEND_MODULES = (\[[^\]]*\])", path.read_text(encoding="utf-8"), re.M)
    if found is None:
        raise TorchsplitError("no BACKEND_MODULES = [...] list", str(path))
    return list(ast.literal_eval(found.group(1)))


def read_derived(root: Path, package: str) -> BackendNames:
    """A derived backend's names: extension from its BUILD, device from its translation."""
    base = root / "third_device" / package
    ext = _EXTENSION_ARG.search((base / "BUILD.bazel").read_text(encoding="utf-8"))
    devices = _derived_devices(root, base)
    if ext is None or len(devices) != 1:
        raise TorchsplitError(
            f"third_device/{package}: expected one `extension = ...` in its BUILD.bazel and a "
            f"translation that renames one device type (found {sorted(devices) or 'none'})"
        )
    return BackendNames(package, next(iter(devices)), ext.group(1), "")
