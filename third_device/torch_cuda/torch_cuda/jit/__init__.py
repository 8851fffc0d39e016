"""torch_cuda's fuser for torch_core.jit: CUDA C compiled at run time by NVRTC.

For a traced graph (:class:`torch_core.jit.Graph`) on ``cuda`` tensors,
:class:`NvrtcFuser` generates one CUDA kernel around core's expression body
(``jit.emit_body``, over core's ``aten/native/ElementwiseMath.h`` with
``TORCH_OP_QUALIFIERS=__device__``), compiles it with NVRTC for each visible
device's architecture, caches the result on disk, and registers it with
core's dispatcher as op ``fused_<hash>`` for ``cuda``; a launch loads the
module into the call's device with the driver API and runs it on the call's
stream (C++: ``csrc/jit/FusedKernels.cpp``).

NVRTC comes from the ``nvidia-cuda-nvrtc`` wheel (pinned on the toolkit's line
in tools/cuda/requirements_lock.txt), or ``$TORCH_CUDA_NVRTC_LIBRARY``: first
beside the CUDA runtime _CUDAC loaded, then in the installed ``nvidia``
package (torch_cuda._libraries says why). Without it fused functions run eagerly (one
warning); NVRTC itself needs no GPU, so compilation is tested everywhere.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from torch_core import jit as _jit
from torch_core.jit._cache import cache_dir, include_root
from torch_core.jit._codegen import C_TYPES, MATH_HEADER
from torch_core.jit._stats import counters, warn_once
from torch_cuda import _CUDAC, _libraries

DEVICE_TYPE = "cuda"
LIBRARY_ENV = "TORCH_CUDA_NVRTC_LIBRARY"
# Bump when the generated CUDA code changes meaning: it is part of every key.
CODEGEN_VERSION = 1
# No FMA contraction: every op rounds on its own, as in eager mode.
BASE_OPTIONS = ("-std=c++17", "--fmad=false", "-DTORCH_OP_QUALIFIERS=__device__")

NvrtcError = _CUDAC.NvrtcError


class NvrtcUnavailable(RuntimeError):
    """NVRTC cannot be loaded (no wheel, or torch_cuda built without its header)."""


# ---- NVRTC ---------------------------------------------------------------------------


def _find_library() -> tuple[str, list[str]] | None:
    """(libnvrtc, [libnvrtc-builtins...]): the pinned toolkit's first (torch_cuda._libraries)."""
    # CUDA 13 wheels install under nvidia/cu13, CUDA 12 ones under nvidia/cuda_nvrtc.
    for lib in _libraries.search_directories(("cu13", "cuda_nvrtc")):
        main = sorted(p for p in glob.glob(str(lib / "libnvrtc.so.*")) if ".alt." not in p)
        if main:
            builtins = sorted(
                p for p in glob.glob(str(lib / "libnvrtc-builtins.so.*")) if ".alt." not in p
            )
            return main[0], builtins
    return None


def nvrtc_library() -> str | None:
    """The NVRTC library load_nvrtc() loads (None when there is none)."""
    named = os.environ.get(LIBRARY_ENV, "")
    if named:
        return named
    found = _find_library()
    return found[0] if found else None


_load_lock = threading.Lock()


def load_nvrtc() -> None:
    """Loads NVRTC once; raises NvrtcUnavailable saying what is missing."""
    with _load_lock:
        if _CUDAC._nvrtc_loaded():
            return
        if not _CUDAC._nvrtc_headers_available():
            raise NvrtcUnavailable(
                "torch_cuda was built without NVRTC's header (the nvidia-cuda-nvrtc wheel was "
                "not installed for the build's Python; run tools/dev bootstrap and rebuild)"
            )
        named = os.environ.get(LIBRARY_ENV, "")
        if named:
            library, preload = (
                named,
                sorted(glob.glob(str(Path(named).parent / "libnvrtc-builtins.so.*"))),
            )
        else:
            found = _find_library()
            if found is None:
                raise NvrtcUnavailable(
                    "NVRTC not found: install the nvidia-cuda-nvrtc wheel "
                    f"(tools/cuda/requirements_lock.txt: tools/dev bootstrap) or set ${LIBRARY_ENV}"
                )
            library, preload = found
        try:
            _CUDAC._nvrtc_load(library, preload)
        except RuntimeError as error:
            raise NvrtcUnavailable(str(error)) from error


def nvrtc_version() -> tuple[int, int]:
    """NVRTC's (major, minor), e.g. (13, 0)."""
    load_nvrtc()
    return tuple(_CUDAC._nvrtc_version())


def supported_archs() -> list[int]:
    """The architectures this NVRTC compiles for (75, 80, ..., 120)."""
    load_nvrtc()
    return list(_CUDAC._nvrtc_supported_archs())


def target_for(arch: int) -> str:
    """NVRTC's --gpu-architecture for a device of ``arch`` (major * 10 + minor).

    ``sm_XX`` (a cubin, no JIT at load) when NVRTC knows the architecture;
    for a newer device, PTX for the newest architecture NVRTC knows
    (``compute_XX``), which the driver compiles when loading.
    """
    known = supported_archs()
    if arch in known:
        return f"sm_{arch}"
    older = [a for a in known if a <= arch]
    if not older:
        raise NvrtcUnavailable(f"NVRTC {nvrtc_version()} cannot target sm_{arch} (knows {known})")
    return f"compute_{max(older)}"


# ---- code generation -------------------------------------------------------------------

# NVRTC has no C++ standard library. Core's header includes <cmath>, and the
# expression body spells std::exp, std::tanh and std::numeric_limits; these
# in-memory headers give NVRTC exactly that, over CUDA's device math.
_VIRTUAL_HEADERS = {
    "cmath": (
        "#pragma once\n"
        "namespace std {\n"
        "using ::exp;\nusing ::tanh;\nusing ::fabs;\nusing ::sqrt;\nusing ::log;\n"
        "}\n"
    ),
    "limits": (
        "#pragma once\n"
        "namespace std {\n"
        "template <typename T> struct numeric_limits;\n"
        "template <> struct numeric_limits<double> {\n"
        "  __device__ static double infinity() {\n"
        "    return __longlong_as_double(0x7ff0000000000000LL);\n"
        "  }\n"
        "  __device__ static double quiet_NaN() {\n"
        "    return __longlong_as_double(0x7ff8000000000000LL);\n"
        "  }\n"
        "};\n"
        "}\n"
    ),
}


def emit_cuda_source(graph: _jit.Graph) -> str:
    """The CUDA translation unit: core's body plus a one-thread-per-element kernel.

    Element-wise: ``extern "C" __global__ void fused_<hash>(const T* in0, ...,
    T* out, long long n)`` with a grid-stride loop. Ending in ``sum``: one block
    accumulates in double (as core's sum does) and reduces in shared memory.
    """
    name = graph.kernel_name
    scalar = C_TYPES[graph.dtype]
    params = "".join(f"const scalar_t* __restrict__ in{i}, " for i in range(graph.num_inputs))
    loads = ", ".join(f"in{i}[i]" for i in range(graph.num_inputs))
    comment = "".join(f"// {line}\n" for line in graph.text().splitlines())
    head = (
        f"// Generated by torch_cuda.jit (nvrtc codegen v{CODEGEN_VERSION}) from:\n{comment}"
        "#include <cmath>\n#include <limits>\n\n"
        f'#include "{MATH_HEADER}"\n\n'
        "namespace {\n"
        f"using scalar_t = {scalar};\n\n"
        f"{_jit.emit_body(graph)}\n"
        "}  // namespace\n\n"
    )
    if graph.reduction == "sum":
        block = _CUDAC._JIT_REDUCTION_BLOCK
        kernel = (
            f'extern "C" __global__ void __launch_bounds__({block})\n'
            f"{name}({params}scalar_t* __restrict__ out, long long n) {{\n"
            f"  __shared__ double partial[{block}];\n"
            "  double acc = 0;\n"
            "  for (long long i = threadIdx.x; i < n; i += blockDim.x) {\n"
            f"    acc += static_cast<double>(fused_body({loads}));\n"
            "  }\n"
            "  partial[threadIdx.x] = acc;\n"
            "  __syncthreads();\n"
            "  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {\n"
            "    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];\n"
            "    __syncthreads();\n"
            "  }\n"
            "  if (threadIdx.x == 0) out[0] = static_cast<scalar_t>(partial[0]);\n"
            "}\n"
        )
    else:
        block = _CUDAC._JIT_ELEMENTWISE_BLOCK
        kernel = (
            f'extern "C" __global__ void __launch_bounds__({block})\n'
            f"{name}({params}scalar_t* __restrict__ out, long long n) {{\n"
            "  const long long stride = static_cast<long long>(blockDim.x) * gridDim.x;\n"
            "  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;"
            " i < n; i += stride) {\n"
            f"    out[i] = fused_body({loads});\n"
            "  }\n"
            "}\n"
        )
    return head + kernel


def _headers() -> list[tuple[str, str]]:
    math = (include_root() / MATH_HEADER).read_text()
    return [*_VIRTUAL_HEADERS.items(), (MATH_HEADER, math)]


# ---- compiling, with a disk cache -------------------------------------------------------


@dataclass(frozen=True)
class Compiled:
    """One NVRTC compilation: the image to load (cubin, else PTX) and its PTX."""

    key: str
    target: str
    ptx: bytes
    cubin: bytes

    @property
    def image(self) -> bytes:
        # cuModuleLoadData takes either; PTX must be NUL-terminated.
        return self.cubin if self.cubin else self.ptx + b"\0"


def _write_atomic(directory: Path, name: str, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, directory / name)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class NvrtcCache:
    """NVRTC output by key, in memory and under ``<jit cache>/nvrtc/``.

    The key hashes the source, the in-memory headers (so core's math
    header's content), the options, the target architecture and NVRTC's
    version. Files: ``<key>.cu`` (the source), ``<key>.ptx``, and for a real
    architecture ``<key>.cubin``; each written to a temporary file in the
    directory, fsynced and renamed, the cubin (the file a lookup tests) last.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._memory: dict[str, Compiled] = {}

    @staticmethod
    def directory() -> Path:
        return cache_dir() / "nvrtc"

    def key(self, source: str, headers: list[tuple[str, str]], options: list[str]) -> str:
        digest = hashlib.sha256()
        parts = [source, *(f"{n}\n{c}" for n, c in headers), " ".join(options)]
        major, minor = nvrtc_version()
        parts.append(f"nvrtc {major}.{minor}")
        for part in parts:
            data = part.encode()
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)
        return digest.hexdigest()

    def compile(self, source: str, name: str, target: str) -> Compiled:
        headers = _headers()
        options = [*BASE_OPTIONS, f"--gpu-architecture={target}"]
        key = self.key(source, headers, options)
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None:
                counters().memory_hits += 1
                return hit
            directory = self.directory()
            directory.mkdir(parents=True, exist_ok=True)
            real = target.startswith("sm_")
            ptx_file, cubin_file = directory / f"{key}.ptx", directory / f"{key}.cubin"
            if ptx_file.is_file() and (cubin_file.is_file() or not real):
                compiled = Compiled(
                    key, target, ptx_file.read_bytes(), cubin_file.read_bytes() if real else b""
                )
                counters().disk_hits += 1
            else:
                ptx, cubin, _warnings = _CUDAC._nvrtc_compile(
                    source, f"{name}.cu", headers, options
                )
                counters().compilations += 1
                compiled = Compiled(key, target, ptx, cubin)
                _write_atomic(directory, f"{key}.cu", source.encode())
                if real and cubin:
                    _write_atomic(directory, f"{key}.cubin", cubin)
                _write_atomic(directory, f"{key}.ptx", ptx)
            self._memory[key] = compiled
            return compiled

    def clear_memory(self) -> None:
        with self._lock:
            self._memory.clear()


_CACHE = NvrtcCache()


def nvrtc_cache() -> NvrtcCache:
    return _CACHE


def compile_graph(graph: _jit.Graph, target: str) -> Compiled:
    """NVRTC output for ``graph`` at ``target`` (``sm_90``, ``compute_120``, ...)."""
    return _CACHE.compile(emit_cuda_source(graph), graph.kernel_name, target)


def compile_elementwise(name: str, num_inputs: int, expression: str, target: str) -> Compiled:
    """Compiles a float32 element-wise ``expression`` over ``in0..`` (csrc/jit/KernelSource.h)."""
    source = _CUDAC._elementwise_kernel_source(name, num_inputs, expression)
    return _CACHE.compile(source, name, target)


# ---- the fuser ---------------------------------------------------------------------------


class NvrtcFuser:
    """The ``cuda`` fuser: NVRTC-compiled kernels launched through core's dispatcher.

    ``archs``: device architectures to compile for (major * 10 + minor);
    None means every visible device's.
    """

    def __init__(self, archs: Sequence[int] | None = None) -> None:
        self._archs = None if archs is None else sorted(set(archs))

    def archs(self) -> list[int]:
        if self._archs is not None:
            return self._archs
        return sorted({_CUDAC._device_arch(i) for i in range(_CUDAC._device_count())})

    def compile(self, graph: _jit.Graph) -> _jit.FusedKernel | None:
        try:
            load_nvrtc()
        except NvrtcUnavailable as error:
            warn_once(f"torch_cuda.jit: {error}; fused functions run eagerly")
            return None
        archs = self.archs()
        if not archs:
            warn_once("torch_cuda.jit: no CUDA device to compile for; fused functions run eagerly")
            return None
        images = {arch: compile_graph(graph, target_for(arch)).image for arch in archs}
        name = graph.kernel_name
        _CUDAC._jit_register_kernel(name, images, graph.reduction is not None, graph.num_inputs)
        return _jit.DispatchedKernel(name, graph.reduction is not None)

    def __repr__(self) -> str:
        return f"NvrtcFuser(archs={self._archs!r})"


fuser = NvrtcFuser()
_jit.register_fuser(DEVICE_TYPE, fuser)


def clear_cache_dir() -> None:
    """Removes the on-disk NVRTC cache (tests)."""
    shutil.rmtree(NvrtcCache.directory(), ignore_errors=True)


__all__ = [
    "BASE_OPTIONS",
    "Compiled",
    "NvrtcCache",
    "NvrtcError",
    "NvrtcFuser",
    "NvrtcUnavailable",
    "compile_elementwise",
    "compile_graph",
    "emit_cuda_source",
    "fuser",
    "load_nvrtc",
    "nvrtc_cache",
    "nvrtc_version",
    "supported_archs",
    "target_for",
]
