"""_CUDAC.so really carries device code for the configured architectures.

The toolkit here has no cuobjdump, so the check reads the fat binaries
itself: the ELF section ``.nv_fatbin`` holds one fat binary per ``.cu`` file,
each a list of entries (kind 2: a cubin, i.e. SASS, for one sm; kind 1: PTX).
The cubins are ELF files whose ``e_flags`` name their sm again, so the check
does not rest on the fat-binary header alone.
"""

from __future__ import annotations

import struct
from pathlib import Path

import torch_cuda

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX = 1
KIND_CUBIN = 2
# The default of --@rules_cuda//cuda:archs: sm_80;sm_90;sm_100;sm_120;compute_120.
EXPECTED_SASS = {80, 90, 100, 120}
EXPECTED_PTX = {120}


def elf_section(data: bytes, name: str) -> bytes:
    assert data[:4] == b"\x7fELF" and data[4] == 2, "not a 64-bit ELF file"
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    for h in headers:
        start = names_at + h[0]
        if data[start : data.index(b"\0", start)].decode() == name:
            return data[h[4] : h[4] + h[5]]
    raise AssertionError(f"no {name} section")


def fatbin_entries(section: bytes) -> list[tuple[int, int, bytes]]:
    """(kind, sm, first bytes of the payload) of every entry of every fat binary."""
    entries = []
    offset = 0
    while offset + 16 <= len(section):
        magic, _version, header_size, size = struct.unpack_from("<IHHQ", section, offset)
        if magic != FATBIN_MAGIC:  # padding between fat binaries
            offset += 8
            continue
        entry = offset + header_size
        end = entry + size
        while entry < end:
            kind, _v, entry_header, padded = struct.unpack_from("<HHIQ", section, entry)
            (sm,) = struct.unpack_from("<I", section, entry + 28)
            payload = section[entry + entry_header : entry + entry_header + 64]
            entries.append((kind, sm, payload))
            entry += entry_header + padded
        offset = end
    return entries


def test_cudac_contains_sass_for_every_configured_arch() -> None:
    so = Path(torch_cuda._CUDAC.__file__)
    entries = fatbin_entries(elf_section(so.read_bytes(), ".nv_fatbin"))
    assert entries, "no device code in _CUDAC.so"
    sass = {sm for kind, sm, _ in entries if kind == KIND_CUBIN}
    ptx = {sm for kind, sm, _ in entries if kind == KIND_PTX}
    assert sass == EXPECTED_SASS, sass
    assert ptx == EXPECTED_PTX, ptx
    # Each cubin is an ELF (OS ABI "CUDA") whose e_flags carry its sm in bits 8-15.
    for kind, sm, payload in entries:
        if kind == KIND_CUBIN:
            assert payload[:4] == b"\x7fELF", f"sm_{sm} cubin is not an ELF file"
            (e_flags,) = struct.unpack_from("<I", payload, 0x30)
            assert (e_flags >> 8) & 0xFF == sm
    # Every .cu file (pointwise, reduce, matmul) was built for sm_90 (H100).
    assert sum(1 for kind, sm, _ in entries if kind == KIND_CUBIN and sm == 90) >= 3
