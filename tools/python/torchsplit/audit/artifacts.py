"""The audit's artifact check: what the build *produced* for core and each backend.

For every ELF shared object or executable Bazel built under a core package
(libtorch_core.so, _C.so, any future binary):

* each DT_NEEDED entry must match the policy's CORE_NEEDED allowlist (prefixes);
* no undefined dynamic symbol belongs to a vendor API (cuda*, cu[A-Z]*, nvrtc*,
  nccl*, nvml*, hip*...: torchsplit.vendors);
* no string in .rodata names a vendor library or toolkit path (a dlopen("libcu"
  "dart.so.13") ends up there whatever the source spelling).

For a backend's artifacts: no DT_NEEDED entry or .rodata string names another
backend. Artifacts not built yet are skipped (the audit says how many it read).
"""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from torchsplit import vendors
from torchsplit.audit.findings import Finding
from torchsplit.audit.policy import Policy

_STRINGS = re.compile(rb"[\x20-\x7e]{5,}")
_ELF_MAGIC = b"\x7fELF"


def _artifacts(base: Path) -> list[Path]:
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if d != "_objs" and not d.endswith(".runfiles")]
        for name in filenames:
            path = Path(dirpath) / name
            if name.endswith((".params", ".o", ".a", ".lo", ".sh", ".py")) or not path.is_file():
                continue
            with open(path, "rb") as f:
                if f.read(4) == _ELF_MAGIC:
                    out.append(path)
    return sorted(out)


def _undefined(section: SymbolTableSection, elf: ELFFile) -> list[str]:
    """Names of the undefined symbols of .dynsym, read straight from the table (pyelftools'
    per-symbol objects cost seconds on libtorch_core.so's exports)."""
    if elf.elfclass != 64 or not elf.little_endian:
        return [s.name for s in section.iter_symbols() if s.name and s["st_shndx"] == "SHN_UNDEF"]
    names = section.stringtable.data()
    out = []
    for st_name, st_shndx in struct.iter_unpack("<I2xH16x", section.data()):
        if st_shndx == 0 and st_name:
            out.append(names[st_name : names.index(b"\0", st_name)].decode("ascii", "replace"))
    return out


def _read(path: Path) -> tuple[list[str], list[str], list[str]] | None:
    """(DT_NEEDED entries, undefined dynamic symbols, .rodata strings) of an ELF file."""
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            if elf["e_type"] not in ("ET_DYN", "ET_EXEC"):
                return None
            needed: list[str] = []
            undefined: list[str] = []
            for section in elf.iter_sections():
                if isinstance(section, DynamicSection):
                    needed += [
                        t.needed for t in section.iter_tags() if t.entry.d_tag == "DT_NEEDED"
                    ]
                elif isinstance(section, SymbolTableSection) and section.name == ".dynsym":
                    undefined += _undefined(section, elf)
            rodata = elf.get_section_by_name(".rodata")
            data = rodata.data() if rodata is not None else b""
    except (ELFError, OSError):
        return None
    strings = [m.group(0).decode("ascii") for m in _STRINGS.finditer(data)]
    return needed, undefined, strings


def _mangled(package: str) -> str:
    """A package as Bazel spells it in solib names (third_device/x_y -> third_Udevice_Sx_Uy)."""
    return package.replace("_", "_U").replace("/", "_S")


def check_artifacts(
    bin_dir: Path,
    workspace: Path,
    policy: Policy,
    packages: list[str],
    newer_than: float | None = None,
) -> tuple[list[Finding], int]:
    """Findings over the artifacts built for the guarded layers, and how many files were read
    (only those modified after ``newer_than``, a time.time(), when given)."""
    findings: list[Finding] = []
    read = 0
    layers = {p: policy.layer_of("", p) for p in packages if not policy.is_exempt("", p)}
    backends = sorted({p.split("/")[1] for p, layer in layers.items() if layer == "backend"})
    roots = sorted({p.split("/")[0] for p, layer in layers.items() if layer == "core"})
    roots += [f"third_device/{b}" for b in backends]
    for top in roots:
        backend = top.split("/")[1] if top.startswith("third_device/") else None
        others = [b for b in backends if b != backend]
        for path in _artifacts(bin_dir / top):
            if newer_than is not None and path.stat().st_mtime < newer_than:
                continue
            got = _read(path)
            if got is None:
                continue
            read += 1
            rel = f"bazel-bin/{path.relative_to(bin_dir).as_posix()}"
            needed, undefined, strings = got
            if backend is None:
                findings += _core(rel, needed, undefined, strings, policy)
            else:
                findings += _backend(rel, needed, strings, others)
    return findings, read


def _core(
    rel: str, needed: list[str], undefined: list[str], strings: list[str], policy: Policy
) -> list[Finding]:
    out: list[Finding] = []
    for entry in needed:
        if not any(entry.startswith(p) for p in policy.core_needed):
            family = vendors.library_family(entry)
            what = f"a {family} vendor library" if family else "not in the policy's CORE_NEEDED"
            out.append(Finding("ARTIFACT", "CORE_NEEDED", rel, 0, f"NEEDED {entry}: {what}"))
    vendor_symbols = sorted(s for s in undefined if vendors.symbol_family(s))
    if vendor_symbols:
        shown = ", ".join(vendor_symbols[:5]) + (" ..." if len(vendor_symbols) > 5 else "")
        out.append(
            Finding("ARTIFACT", "core-to-toolkit", rel, 0,
                    f"{len(vendor_symbols)} undefined vendor symbol(s): {shown}")
        )  # fmt: skip
    for text in sorted(set(strings)):
        family = vendors.library_family(text) or vendors.toolkit_path_family(text)
        if family:
            out.append(
                Finding("ARTIFACT", "core-to-toolkit", rel, 0,
                        f".rodata names a {family} library or path: {text!r}")
            )  # fmt: skip
    return out


def _backend(rel: str, needed: list[str], strings: list[str], others: list[str]) -> list[Finding]:
    out: list[Finding] = []
    for other in others:
        marks = (other, _mangled(f"third_device/{other}"))
        for entry in needed:
            if any(m in entry for m in marks):
                out.append(
                    Finding("ARTIFACT", "backend-to-backend", rel, 0,
                            f"NEEDED {entry}: a library of {other}")
                )  # fmt: skip
        for text in sorted(set(strings)):
            if re.search(rf"\b{re.escape(other)}\b|{re.escape(marks[1])}", text):
                out.append(
                    Finding("ARTIFACT", "backend-to-backend", rel, 0,
                            f".rodata names backend {other}: {text!r}")
                )  # fmt: skip
    return out
