"""A backend's names, derived from its package name, and the tokens to rename in a copy.

A backend owns five names that must be unique in the process and the tree: its
Python package (``torch_acme``), device type (``acme``), extension
(``_ACMEC``), process-group backend (``accl``) and environment-variable prefix
(``TORCH_ACME_``). :func:`taken_names` reads what existing backends hold,
:func:`renames` turns a template's names into the new ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from torchsplit.errors import TorchsplitError

_PACKAGE = re.compile(r"^[a-z][a-z0-9_]*$")
_DEVICE = re.compile(r"^[a-z][a-z0-9_]*$")
_EXTENSION = re.compile(r"^_[A-Za-z][A-Za-z0-9_]*$")
_DEVICE_TYPE = re.compile(r"""^DEVICE_TYPE\s*=\s*["']([a-z][a-z0-9_]*)["']""", re.M)
_PG_BACKEND = re.compile(r"""register_backend\(\s*["']([A-Za-z0-9_]+)["']""")
_EXTENSION_ARG = re.compile(r"""^\s*extension\s*=\s*"([A-Za-z0-9_]+)",""", re.M)
# Names core or the tests hold (cpu and tcp in core, fake and faulty in tests/backends).
RESERVED_DEVICES = ("cpu", "fake", "faulty")
RESERVED_PG = ("tcp",)


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


def derive(package: str, device: str | None, extension: str | None) -> BackendNames:
    """The names of a new backend; defaults follow torch_emu's (emu, _EMUC, eccl)."""
    if not _PACKAGE.match(package):
        raise TorchsplitError(f"backend name {package!r} must be a lowercase identifier")
    device = device or package.removeprefix("torch_")
    if not _DEVICE.match(device):
        raise TorchsplitError(f"device name {device!r} must be a lowercase identifier")
    extension = extension or f"_{device.upper().replace('_', '')}C"
    if not _EXTENSION.match(extension):
        raise TorchsplitError(f"extension {extension!r} must be '_' and an identifier")
    return BackendNames(package, device, extension, f"{device[0]}ccl")


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
        for device in devices:
            taken["device type"].setdefault(device, holder)
        for pg in pgs:
            taken["process-group backend"].setdefault(pg, holder)
    return taken


def collisions(names: BackendNames, taken: dict[str, dict[str, str]]) -> list[str]:
    wanted = {
        "package": names.package,
        "device type": names.device,
        "extension": names.extension,
        "process-group backend": names.pg_backend,
        "environment prefix": names.env_prefix,
    }
    return [
        f"{kind} '{value}' is already held by {taken[kind][value]}"
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
