"""The kernel cache: compiled fused kernels by content, in memory and on disk.

A kernel's key hashes everything its machine code depends on: the generated
source (which embeds the graph and the code generator's version), the
compiler's identity, the flags and the shared math header's content. The
shared object lives at ``<cache dir>/<key>.so`` beside its source
``<key>.cpp``; both are written atomically (a temporary file in the same
directory, fsync, rename), so concurrent processes and interrupted compiles
never leave a truncated kernel behind.

Cache directory: ``$TORCH_CORE_JIT_CACHE``, else
``$XDG_CACHE_HOME/torchsplit/jit``, else ``~/.cache/torchsplit/jit``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from pathlib import Path

import torch_core
from torch_core.jit._codegen import MATH_HEADER
from torch_core.jit._compiler import FLAGS, HostCompiler, compile_shared
from torch_core.jit._stats import counters

CACHE_ENV = "TORCH_CORE_JIT_CACHE"


def cache_dir() -> Path:
    named = os.environ.get(CACHE_ENV, "")
    if named:
        return Path(named)
    base = os.environ.get("XDG_CACHE_HOME", "") or str(Path.home() / ".cache")
    return Path(base) / "torchsplit" / "jit"


def include_root() -> Path:
    """The directory core's headers are included from ("aten/native/...").

    Next to the torch_core package in a source checkout and in Bazel's
    runfiles (//core:torch_core ships the header as data); inside the package,
    under include/, when installed from the wheel.
    """
    for entry in torch_core.__path__:
        package = Path(entry).resolve()
        for root in (package / "include", package.parent):
            if (root / MATH_HEADER).is_file():
                return root
    raise FileNotFoundError(
        f"jit: core's {MATH_HEADER} is not beside the torch_core package "
        f"(searched {list(torch_core.__path__)})"
    )


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _publish(tmp: Path, final: Path) -> None:
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, final)


class KernelCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._built: dict[str, Path] = {}

    def key(self, source: str, compiler: HostCompiler) -> str:
        header = (include_root() / MATH_HEADER).read_bytes()
        digest = hashlib.sha256()
        for part in (source.encode(), compiler.identity.encode(), " ".join(FLAGS).encode(), header):
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
        return digest.hexdigest()

    def build(self, source: str, compiler: HostCompiler) -> Path:
        """The shared object for ``source``: built in this process, on disk, or compiled now."""
        key = self.key(source, compiler)
        with self._lock:
            built = self._built.get(key)
            if built is not None:
                counters().memory_hits += 1
                return built
            directory = cache_dir()
            directory.mkdir(parents=True, exist_ok=True)
            library = directory / f"{key}.so"
            if library.is_file():
                counters().disk_hits += 1
            else:
                self._compile(source, compiler, directory, key)
                counters().compilations += 1
            self._built[key] = library
            return library

    def clear_memory(self) -> None:
        """Forgets what this process built (the disk cache stays): the next build looks on disk."""
        with self._lock:
            self._built.clear()

    @staticmethod
    def _compile(source: str, compiler: HostCompiler, directory: Path, key: str) -> None:
        work = Path(tempfile.mkdtemp(prefix=f".{key[:16]}-", dir=directory))
        try:
            src = work / f"{key}.cpp"
            src.write_text(source)
            lib = work / f"{key}.so"
            compile_shared(compiler, src, lib, [include_root()])
            # Source first: a published .so always has its source beside it.
            _publish(src, directory / src.name)
            _publish(lib, directory / lib.name)
            _fsync_dir(directory)
        finally:
            shutil.rmtree(work, ignore_errors=True)


_CACHE = KernelCache()


def kernel_cache() -> KernelCache:
    """The process's kernel cache (a registry of built kernels)."""
    return _CACHE
