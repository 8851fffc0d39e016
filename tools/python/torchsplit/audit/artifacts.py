"""The audit's artifact check: what the current build *produced* for core and each backend.

The artifacts are the outputs of the CppLink actions of core's and every backend's
targets in the current configuration's action graph (actions.py, ``bazel aquery``): a
library left under bazel-bin by an earlier build (a target since removed, another
configuration) is never read. For each ELF shared object or executable among them:

* core: each DT_NEEDED entry must match the policy's CORE_NEEDED allowlist (prefixes); no
  undefined dynamic symbol belongs to a vendor API (cuda*, cu[A-Z]*, nvrtc*, nccl*,
  nvml*, hip*...: torchsplit.vendors); no string in .rodata names a vendor library or
  toolkit path, a vendor command-line tool or environment variable, or a backend (a
  dlopen("libcu" "dart.so.13") ends up there whatever the source spelling);
* a backend: no DT_NEEDED entry, undefined symbol or .rodata string names another
  backend (its directory, package or extension: ``_EMUC.so``) or a vendor that is not
  its toolkit's (policy TOOLKITS).

An output not built yet is skipped (the audit says how many it read).
"""

from __future__ import annotations

import mmap
import re
import struct
from pathlib import Path

from torchsplit import vendors
from torchsplit.audit.actions import Output
from torchsplit.audit.findings import Finding
from torchsplit.audit.layers import Break, Layer, Layers
from torchsplit.audit.policy import Policy

_STRINGS = re.compile(rb"[\x20-\x7e]{4,}")
_ELF64_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")
_ELF64_SECTION = struct.Struct("<IIQQQQIIQQ")
_SHT_DYNAMIC, _SHT_DYNSYM, _DT_NEEDED = 6, 11, 1
_ET_EXEC, _ET_DYN = 2, 3


def _cstring(table: bytes, offset: int) -> str:
    return table[offset : table.index(b"\0", offset)].decode("ascii", "replace")


def _read(path: Path) -> tuple[list[str], list[str], list[str]] | None:
    """(DT_NEEDED entries, undefined dynamic symbols, .rodata strings) of an ELF file.

    64-bit little-endian files (every target this project builds for) are read with
    ``struct`` straight from the section headers: pyelftools' objects cost most of the
    audit's warm time. Anything else goes through pyelftools."""
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if data[:4] != b"\x7fELF":
                return None
            if data[4] != 2 or data[5] != 1:
                return _read_with_pyelftools(path)
            header = _ELF64_HEADER.unpack_from(data)
            e_type, e_shoff, e_shentsize, e_shnum, e_shstrndx = (
                header[1], header[6], header[11], header[12], header[13]
            )  # fmt: skip
            if e_type not in (_ET_EXEC, _ET_DYN):
                return None
            if e_shnum == 0 or e_shstrndx >= e_shnum:  # extended numbering
                return _read_with_pyelftools(path)
            sections = [
                _ELF64_SECTION.unpack_from(data, e_shoff + i * e_shentsize) for i in range(e_shnum)
            ]

            def body(index: int) -> bytes:
                section = sections[index]
                return data[section[4] : section[4] + section[5]]

            names = body(e_shstrndx)
            needed: list[str] = []
            undefined: list[str] = []
            rodata = b""
            for index, section in enumerate(sections):
                name, kind, link = _cstring(names, section[0]), section[1], section[6]
                if kind == _SHT_DYNAMIC:
                    strings = body(link)
                    for tag, value in struct.iter_unpack("<qQ", body(index)):
                        if tag == _DT_NEEDED:
                            needed.append(_cstring(strings, value))
                elif kind == _SHT_DYNSYM:
                    strings = body(link)
                    for st_name, st_shndx in struct.iter_unpack("<I2xH16x", body(index)):
                        if st_shndx == 0 and st_name:
                            undefined.append(_cstring(strings, st_name))
                elif name == ".rodata":
                    rodata = body(index)
    except (OSError, ValueError, struct.error, IndexError):
        return None
    strings = [m.group(0).decode("ascii") for m in _STRINGS.finditer(rodata)]
    return needed, undefined, strings


def _read_with_pyelftools(path: Path) -> tuple[list[str], list[str], list[str]] | None:
    from elftools.common.exceptions import ELFError
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

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
                    undefined += [
                        s.name for s in section.iter_symbols()
                        if s.name and s["st_shndx"] == "SHN_UNDEF"
                    ]  # fmt: skip
            rodata = elf.get_section_by_name(".rodata")
            data = rodata.data() if rodata is not None else b""
    except (ELFError, OSError):
        return None
    strings = [m.group(0).decode("ascii") for m in _STRINGS.finditer(data)]
    return needed, undefined, strings


def check_artifacts(
    outputs: list[Output],
    layers: Layers,
    policy: Policy,
    newer_than: float | None = None,
) -> tuple[list[Finding], int]:
    """Findings over ``outputs`` (the link outputs of the action graph) and how many were
    read (only those modified after ``newer_than``, a time.time(), when given)."""
    findings: list[Finding] = []
    read = 0
    candidates = _candidates(layers)
    for output in outputs:
        layer = layers.layer(output.package + "/BUILD")
        if layer is None or not output.file.is_file():
            continue
        if newer_than is not None and output.file.stat().st_mtime < newer_than:
            continue
        got = _read(output.file)
        if got is None:
            continue
        read += 1
        findings += _check(output.path, layer, layers, policy, candidates, *got)
    return findings, read


def _check(
    rel: str,
    layer: Layer,
    layers: Layers,
    policy: Policy,
    candidates: re.Pattern[str],
    needed: list[str],
    undefined: list[str],
    strings: list[str],
) -> list[Finding]:
    out: list[Finding] = []

    def add(why: Break, message: str) -> None:
        out.append(Finding("ARTIFACT", why.rule, rel, 0, message, why.pair))

    but = layer.name if layer.kind == "backend" else None
    for entry in needed:
        family = vendors.library_family(entry)
        why = layer.vendor_break(family) if family else None
        if why:
            add(why, f"NEEDED {entry}: a {family} vendor library")
            continue
        for backend, name in layers.backends_named_in(entry, but=but):
            hit = layer.backend_break(backend)
            if hit:
                add(hit, f"NEEDED {entry}: a library of {backend} ({name})")
                break
        else:
            if layer.kind == "core" and not any(entry.startswith(p) for p in policy.core_needed):
                out.append(
                    Finding("ARTIFACT", "CORE_NEEDED", rel, 0,
                            f"NEEDED {entry}: not in the policy's CORE_NEEDED", "core -> a library")
                )  # fmt: skip
    by_family: dict[str, list[str]] = {}
    for symbol in undefined:
        family = vendors.symbol_family(symbol)
        if family and layer.vendor_break(family):
            by_family.setdefault(family, []).append(symbol)
    for family, symbols in sorted(by_family.items()):
        symbols.sort()
        shown = ", ".join(symbols[:5]) + (" ..." if len(symbols) > 5 else "")
        why = layer.vendor_break(family)
        if why:
            add(why, f"{len(symbols)} undefined {family} vendor symbol(s): {shown}")
    for text in sorted(set(strings)):
        if not candidates.search(text):
            continue  # names no vendor and no backend (almost every string)
        message = _string(text, layer, layers, but)
        if message:
            add(message[0], message[1])
    return out


def _candidates(layers: Layers) -> re.Pattern[str]:
    """A prefilter: every string _string() reports contains one of these words."""
    words: set[str] = set()
    for vendor in vendors.VENDORS:
        words.update(f"lib{name}" for name in vendor.libraries)
        words.update(vendor.toolkit_paths)
    for table in (vendors.VENDOR_TOOLS, vendors.VENDOR_ENV_PREFIXES):
        words.update(w for values in table.values() for w in values)
    for table in (vendors.VENDOR_ENV_WORDS, vendors.VENDOR_ENV_NAMES):
        words.update(w for values in table.values() for w in values)
    for backend in layers.backends.values():
        words.update((*backend.names, backend.mangled))
    return re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)))


def _string(text: str, layer: Layer, layers: Layers, but: str | None) -> tuple[Break, str] | None:
    """A .rodata string naming another layer: (what it breaks, message)."""
    family = vendors.library_family(text) or vendors.toolkit_path_family(text)
    why = layer.vendor_break(family) if family else None
    if why:
        return why, f".rodata names a {family} library or path: {text!r}"
    family = vendors.env_family(text)
    why = layer.vendor_break(family) if family else None
    if why:
        return why, f".rodata names a {family} environment variable: {text!r}"
    tool = vendors.tool_family(text)
    why = layer.vendor_break(tool[0]) if tool else None
    if why and tool and (text == tool[1] or text.startswith(tool[1] + " ")):
        return why, f".rodata names {tool[1]}, a {tool[0]} command-line tool: {text!r}"
    for backend, name in layers.backends_named_in(text, but=but):
        why = layer.backend_break(backend)
        if why:
            return why, f".rodata names {name}, of backend {backend}: {text!r}"
    return None
