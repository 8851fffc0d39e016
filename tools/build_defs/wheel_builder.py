"""Assembles one wheel (PEP 427) from files Bazel built: the action behind wheel.bzl.

Shared objects get the RUNPATH the wheel's install layout needs, written over
Bazel's build-tree RUNPATH in place (the new one is shorter), so no build
path survives into an installed package.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import re
import struct
import sys
import zipfile
from pathlib import Path

# A fixed timestamp: the same inputs give the same wheel bytes (cacheable).
_DATE_TIME = (2020, 1, 1, 0, 0, 0)
_DT_RPATH, _DT_RUNPATH, _DT_STRTAB = 15, 29, 5
_PT_LOAD, _PT_DYNAMIC = 1, 2


def _pairs(values: list[str]) -> list[tuple[str, str]]:
    return [tuple(v.split("=", 1)) for v in values]  # type: ignore[misc]


def set_runpath(data: bytearray, runpath: str) -> bytearray:
    """Replaces an ELF64 little-endian object's RUNPATH (or RPATH) string in place."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF object")
    phoff, phentsize, phnum = (
        struct.unpack_from("<Q", data, 0x20)[0],
        *struct.unpack_from("<HH", data, 0x36),
    )
    loads, dynamic = [], None
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + i * phentsize
        )
        if p_type == _PT_LOAD:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == _PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    if dynamic is None:
        raise ValueError("no dynamic section")
    entries = [
        struct.unpack_from("<qQ", data, dynamic[0] + off) for off in range(0, dynamic[1], 16)
    ]
    strtab_vaddr = next(v for tag, v in entries if tag == _DT_STRTAB)
    strtab = next(off + strtab_vaddr - va for va, off, sz in loads if va <= strtab_vaddr < va + sz)
    paths = [v for tag, v in entries if tag in (_DT_RUNPATH, _DT_RPATH)]
    if not paths:
        raise ValueError("no RUNPATH to replace (link it with one)")
    new = runpath.encode()
    for value in paths:
        start = strtab + value
        old_len = data.index(b"\0", start) - start
        if len(new) > old_len:
            raise ValueError(f"RUNPATH {runpath!r} is longer than the built one ({old_len} bytes)")
        data[start : start + old_len] = new + b"\0" * (old_len - len(new))
    return data


def _record_line(arcname: str, payload: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(payload).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(payload)}"


def read_pins(path: Path) -> dict[str, str]:
    """name -> version of every `name==version` line of a requirements file."""
    pins = {}
    for line in path.read_text().splitlines():
        match = re.match(r"\s*([A-Za-z0-9_.-]+)==([^\s#;]+)", line)
        if match:
            pins[match.group(1).lower()] = match.group(2)
    return pins


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--output", required=True, type=Path)
    parser.add_argument("--distribution", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--tag", required=True, help="python-abi-platform")
    parser.add_argument("--summary", required=True)
    parser.add_argument("--pins", type=Path, help="lock file for --pinned-requires")
    parser.add_argument("--file", action="append", default=[], help="ARCNAME=PATH")
    parser.add_argument("--runpath", action="append", default=[], help="ARCNAME=RUNPATH")
    parser.add_argument("--requires", action="append", default=[])
    parser.add_argument("--pinned-requires", action="append", default=[])
    parser.add_argument("--entry-point", action="append", default=[], help="GROUP:NAME = MODULE")
    args = parser.parse_args(argv)

    if args.pinned_requires and args.pins is None:
        print("wheel_builder: error: --pinned-requires needs --pins", file=sys.stderr)
        return 2
    pins = read_pins(args.pins) if args.pins is not None else {}
    requires = list(args.requires)
    for name in args.pinned_requires:
        if name.lower() not in pins:
            print(f"wheel_builder: error: {args.pins} pins no {name}", file=sys.stderr)
            return 2
        requires.append(f"{name}=={pins[name.lower()]}")

    dist_info = f"{args.distribution}-{args.version}.dist-info"
    runpaths = dict(_pairs(args.runpath))
    contents: list[tuple[str, bytes]] = []
    for arcname, path in sorted(_pairs(args.file)):
        payload = Path(path).read_bytes()
        if arcname in runpaths:
            payload = bytes(set_runpath(bytearray(payload), runpaths.pop(arcname)))
        contents.append((arcname, payload))
    if runpaths:
        print(f"wheel_builder: error: RUNPATH for absent files {sorted(runpaths)}", file=sys.stderr)
        return 2

    python, abi, platform = args.tag.split("-")
    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {args.distribution}",
        f"Version: {args.version}",
        f"Summary: {args.summary}",
        "Requires-Python: >=3.10",
        *(f"Requires-Dist: {r}" for r in requires),
    ]
    wheel = [
        "Wheel-Version: 1.0",
        "Generator: torchsplit wheel_builder",
        "Root-Is-Purelib: false",
        f"Tag: {python}-{abi}-{platform}",
    ]
    groups: dict[str, list[str]] = {}
    for entry in args.entry_point:
        group, value = entry.split(":", 1)
        groups.setdefault(group, []).append(value)
    entry_points = "".join(
        f"[{group}]\n" + "".join(f"{v}\n" for v in values) + "\n"
        for group, values in sorted(groups.items())
    )
    contents += [
        (f"{dist_info}/METADATA", ("\n".join(metadata) + "\n").encode()),
        (f"{dist_info}/WHEEL", ("\n".join(wheel) + "\n").encode()),
        (f"{dist_info}/top_level.txt", f"{args.distribution}\n".encode()),
    ]
    if entry_points:
        contents.append((f"{dist_info}/entry_points.txt", entry_points.encode()))

    record = [_record_line(name, payload) for name, payload in contents]
    record.append(f"{dist_info}/RECORD,,")
    contents.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    with zipfile.ZipFile(args.output, "w", zipfile.ZIP_DEFLATED) as whl:
        for arcname, payload in contents:
            info = zipfile.ZipInfo(arcname, _DATE_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            executable = arcname.endswith(".so")
            info.external_attr = (0o755 if executable else 0o644) << 16
            whl.writestr(info, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
