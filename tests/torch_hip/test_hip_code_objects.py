"""What hipcc built into _HIPC.so: one AMD GPU code object per configured target.

Each translation unit of device code carries a clang offload bundle in the
.hip_fatbin section (magic __CLANG_OFFLOAD_BUNDLE__, then entries of offset,
size and target triple). Each AMD entry is an ELF code object whose header
says which GPU it is for (EF_AMDGPU_MACH in e_flags): that is what is checked,
not only the triple's name. Default targets: gfx90a and gfx1030
(--@rules_hip//hip:archs).
"""

from __future__ import annotations

import struct
from pathlib import Path

from elftools.elf.elffile import ELFFile

from builds import REPO

EXTENSION = REPO / "bazel-bin" / "third_device" / "torch_hip" / "torch_hip" / "_HIPC.so"
MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
EM_AMDGPU = 224
# EF_AMDGPU_MACH_AMDGCN_* (llvm/BinaryFormat/ELF.h).
MACH = {0x3F: "gfx90a", 0x36: "gfx1030"}


def _extension() -> Path:
    return EXTENSION if EXTENSION.exists() else REPO / "third_device/torch_hip/torch_hip/_HIPC.so"


def bundles(fatbin: bytes) -> list[list[tuple[str, bytes]]]:
    """Every offload bundle in a .hip_fatbin section: [(triple, code object)] each."""
    out = []
    start = fatbin.find(MAGIC)
    while start >= 0:
        (count,) = struct.unpack_from("<Q", fatbin, start + len(MAGIC))
        at = start + len(MAGIC) + 8
        entries = []
        for _ in range(count):
            offset, size, triple_size = struct.unpack_from("<QQQ", fatbin, at)
            triple = fatbin[at + 24 : at + 24 + triple_size].decode()
            entries.append((triple, fatbin[start + offset : start + offset + size]))
            at += 24 + triple_size
        out.append(entries)
        start = fatbin.find(MAGIC, at)
    return out


def _gpu(code_object: bytes) -> str:
    assert code_object[:4] == b"\x7fELF"
    (machine,) = struct.unpack_from("<H", code_object, 18)
    (flags,) = struct.unpack_from("<I", code_object, 48)
    assert machine == EM_AMDGPU
    return MACH.get(flags & 0xFF, hex(flags & 0xFF))


def test_every_kernel_file_has_gfx90a_and_gfx1030_code_objects() -> None:
    with open(_extension(), "rb") as f:
        section = ELFFile(f).get_section_by_name(".hip_fatbin")
        assert section is not None, "_HIPC.so has no .hip_fatbin: no device code linked in"
        found = bundles(section.data())
    # One bundle per .hip translation unit (Matmul, Pointwise, Reduce kernels).
    assert len(found) == 3
    for entries in found:
        gpus = sorted(_gpu(obj) for triple, obj in entries if triple.startswith("hipv4-amdgcn"))
        assert gpus == ["gfx1030", "gfx90a"], entries
        # The triple names the same target the ELF header does.
        assert {t.rsplit("--", 1)[1] for t, _ in entries if "amdgcn" in t} == {"gfx90a", "gfx1030"}


def test_extension_exports_only_its_init() -> None:
    with open(_extension(), "rb") as f:
        symbols = ELFFile(f).get_section_by_name(".dynsym").iter_symbols()
        exported = [
            s.name
            for s in symbols
            if s["st_shndx"] != "SHN_UNDEF" and s["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK")
        ]
    assert exported == ["PyInit__HIPC"]
