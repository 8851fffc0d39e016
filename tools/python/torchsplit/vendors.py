"""The vendor vocabulary every check shares: what names a GPU vendor's software.

The scanner (source text), the audit's artifact check (``DT_NEEDED``, undefined
symbols, ``.rodata`` strings), the Python import check and the BUILD-file check all
ask the same question -- "does this name a vendor library, API or toolkit?" -- so
they ask it here. Each vendor is a *family* ("cuda", "rocm"), so a report can show
the RFC's CUDA-only view or a whole-GPU view.

Add a vendor by adding a :class:`Vendor`; every check picks it up.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Vendor:
    family: str
    # Shared-library base names, without "lib" and ".so*" ("cudart" for libcudart.so.13).
    libraries: tuple[str, ...]
    # C symbol prefixes of the vendor's APIs (runtime, driver, libraries).
    symbol_prefixes: tuple[str, ...]
    # Regular expression for a C symbol of the vendor that prefixes cannot express
    # (CUDA's driver API is cuXxx: "cu" then a capital letter).
    symbol_regex: str
    # Python modules that wrap the vendor's libraries.
    python_modules: tuple[str, ...]
    # Install locations of the vendor's toolkit.
    toolkit_paths: tuple[str, ...]


VENDORS: tuple[Vendor, ...] = (
    Vendor(
        family="cuda",
        libraries=(
            "cuda",
            "cudart",
            "cudadevrt",
            "nvrtc",
            "nvrtc-builtins",
            "nccl",
            "nvidia-ml",
            "cublas",
            "cublasLt",
            "cudnn",
            "cufft",
            "curand",
            "cusparse",
            "cusolver",
            "cupti",
            "nvToolsExt",
            "nvJitLink",
            "nvshmem",
            "cufile",
            # The driver side: JIT linker, video codecs, the driver's own NVML.
            "nvidia-ptxjitcompiler",
            "nvcuvid",
            "nvidia-encode",
            "nvidia-fatbinaryloader",
        ),
        symbol_prefixes=(
            "cuda",
            "nvrtc",
            "nccl",
            "nvml",
            "cublas",
            "cudnn",
            "cufft",
            "curand",
            "cusparse",
            "cusolver",
            "cupti",
            "nvtx",
            "nvshmem",
        ),
        symbol_regex=r"cu[A-Z]\w*",
        python_modules=(
            "pynvml",
            "nvidia_smi",
            "cupy",
            "pycuda",
            "cuda",
            "nvidia",
            "numba.cuda",
        ),
        toolkit_paths=("/usr/local/cuda", "/opt/cuda", "nvidia/cu13", "nvidia/cuda_runtime"),
    ),
    Vendor(
        family="rocm",
        libraries=(
            "amdhip64",
            "hiprtc",
            "rocblas",
            "hipblas",
            "hipblaslt",
            "MIOpen",
            "rccl",
            "roctracer64",
            "rocm_smi64",
            "hsa-runtime64",
            "hipfft",
            "hiprand",
            "hipsparse",
            "rocfft",
            "rocrand",
            "roctx64",
            "amd_smi",
        ),
        symbol_prefixes=("hip", "rocblas", "miopen", "rccl", "roctracer", "rsmi", "hsa_"),
        symbol_regex=r"hip[A-Z]\w*",
        python_modules=("hip", "pyrsmi", "amdsmi"),
        toolkit_paths=("/opt/rocm",),
    ),
)

FAMILIES: tuple[str, ...] = tuple(v.family for v in VENDORS)


def _library_regex(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"\blib(?:{alternatives})(?:\.so(?:\.\d+)*|\.a|\b)")


_LIBRARY_RE = {v.family: _library_regex(v.libraries) for v in VENDORS}
_SYMBOL_RE = {
    v.family: re.compile(
        rf"^(?:{'|'.join(re.escape(p) for p in v.symbol_prefixes)})\w*$|^{v.symbol_regex}$"
    )
    for v in VENDORS
}


def library_family(text: str) -> str | None:
    """The family whose shared library ``text`` names (``libcudart.so.13`` -> "cuda")."""
    for family, pattern in _LIBRARY_RE.items():
        if pattern.search(text):
            return family
    return None


def symbol_family(symbol: str) -> str | None:
    """The family whose API the C symbol ``symbol`` belongs to (``cuInit`` -> "cuda")."""
    base = symbol.split("@", 1)[0]
    for family, pattern in _SYMBOL_RE.items():
        if pattern.match(base):
            return family
    return None


def python_module_family(module: str) -> str | None:
    """The family of an importable module name (``pynvml`` -> "cuda")."""
    for vendor in VENDORS:
        for name in vendor.python_modules:
            if module == name or module.startswith(name + "."):
                return vendor.family
    return None


def toolkit_path_family(text: str) -> str | None:
    """The family whose toolkit install path ``text`` contains."""
    for vendor in VENDORS:
        if any(path in text for path in vendor.toolkit_paths):
            return vendor.family
    return None


def library_name_family(name: str) -> str | None:
    """The family of a bare linker name (``cudart`` of ``-lcudart`` -> "cuda")."""
    for vendor in VENDORS:
        if name in vendor.libraries:
            return vendor.family
    return None


def text_family(text: str) -> str | None:
    """The family a build flag or string names: a library (``libcudart.so``, ``-lcudart``,
    ``-l:libcudart.so.13``) or a toolkit path (``-I/usr/local/cuda/include``)."""
    flag = re.match(r"^-l:?(?:lib)?([\w.+-]+?)(?:\.so(?:\.\d+)*|\.a)?$", text)
    if flag:
        family = library_name_family(flag.group(1))
        if family:
            return family
    return library_family(text) or toolkit_path_family(text)


# --- Source-text vocabulary (used by ``torchsplit scan``) -------------------------------
#
# Words that name a vendor inside identifiers, include paths, strings and comments,
# per family. A *prefix* word also matches with a suffix ("cudaMalloc", "NCCL2");
# an *exact* word is short or common enough ("hip", "cub", "hsa") that it must be a
# whole camel-case or ``_``-separated piece ("hipMalloc", "hip_runtime", "kHIP" but
# never "ship" or "cube").

SOURCE_PREFIX_WORDS: dict[str, tuple[str, ...]] = {
    "cuda": (
        "cuda",
        "cudnn",
        "nccl",
        "nvshmem",
        "cusparse",
        "cublas",
        "cusolver",
        "cufft",
        "curand",
        "cudss",
        "cutlass",
        "nvrtc",
        "nvtx",
        "cupti",
        "nvcc",
        "libcuda",
        # CUTLASS's Python DSL, NVTX's library name, NVIDIA's JIT linker, GPUDirect
        # Storage, the CUDA-only fuser.
        "cutedsl",
        "nvtoolsext",
        "nvjitlink",
        "cufile",
        "nvfuser",
    ),
    "rocm": (
        "rocm",
        "hipcc",
        "miopen",
        "rocblas",
        "hipblas",
        "hipsparse",
        "hipfft",
        "hiprand",
        "hipsolver",
        "hipcub",
        "hiprtc",
        "rccl",
        "roctracer",
        "rocprim",
        "rocsolver",
        "rocsparse",
        "rocrand",
        "amdhip",
        # ROCm's OpenSHMEM, the CUDA-to-HIP translator, ROCm's profiler and its markers.
        "rocshmem",
        "hipify",
        "rocprofiler",
        "roctx",
    ),
}
SOURCE_EXACT_WORDS: dict[str, tuple[str, ...]] = {
    "cuda": ("nvml", "cub", "thrust"),
    "rocm": ("hip", "hsa", "rsmi"),
}

# The legacy THC library is spelled in capitals followed by a capital, "_" or the end
# ("THCState", "THCP_", "THC/"), never "THConcat".
THC_REGEX = r"THC(?![a-z])"

# Compiler-defined macros: the first group names the family ("CUDA"/"NVCC" vs "HIP").
COMPILER_MACRO_REGEX = r"__(?:CUDA|NVCC|HIP)\w*__"

# Vendor C API identifiers (runtime, driver and library calls and types).
API_REGEX: dict[str, str] = {
    "cuda": r"(?:cuda|cublas(?:Lt)?|cudnn|cufft|curand|cusparse(?:Lt)?|cusolver(?:Dn|Sp)?|"
    r"nccl|nvrtc|nvml|nvtx|cupti|nvshmem|nvJitLink)[A-Z]\w*|cu[A-Z][a-z]\w*|CU[a-z]\w*"
    # cuRAND's and NVSHMEM's snake-case device API (curand_init, nvshmem_team_t).
    r"|curand_\w+|nvshmemx?_\w+"
    r"|CU(?:BLAS|DNN|FFT|RAND|SPARSE|SOLVER)_\w+|NCCL_[A-Z]\w*"
    # CUDA_* is mostly torch's own macros (CUDA_ACC_TYPE): only the toolkit's spellings.
    r"|CUDA_(?:VERSION|SUCCESS|ERROR_\w+|[RC]_\d+\w*)|CUDART_\w+",
    "rocm": r"(?:hip|hipblas(?:Lt)?|hipsparse|hipfft|hiprand|hipsolver|miopen|rccl|"
    r"roctracer|rocprofiler|hiprtc)[A-Z]\w*|(?:rocblas|rocsolver|rocsparse|rsmi|hsa|"
    r"hipblaslt)_\w+|(?:HIPBLAS|HIPSPARSE|MIOPEN|ROCBLAS|HIP)_STATUS_\w+"
    r"|rocshmem_\w+|__hip_\w+",
}

# Torch's own device-type spellings of each family: DeviceType::CUDA, kHIP, ...
DEVICE_TYPE_WORDS: dict[str, tuple[str, ...]] = {"cuda": ("CUDA",), "rocm": ("HIP",)}

# Directories and file names that make a file move under the RFC's inter-file criteria.
MOVE_DIRS: dict[str, tuple[str, ...]] = {
    "cuda": ("cuda", "cudnn", "THC"),
    "rocm": ("hip", "miopen"),
}
MOVE_NAME_WORDS: dict[str, tuple[str, ...]] = {"cuda": ("cuda",), "rocm": ()}
MOVE_SUFFIXES: dict[str, tuple[str, ...]] = {"cuda": (".cu", ".cuh"), "rocm": ()}


def move_family(path: str, family: str | None = None) -> tuple[str, str] | None:
    """``(family, criterion)`` when the RFC's inter-file criteria move ``path``.

    Only ``family``'s criteria when given; otherwise a vendor directory decides first
    (``ATen/hip/X.cuh`` is ROCm's), then the name.
    """
    directory, _, name = path.rpartition("/")
    hit = _move_directory(directory, family)
    if hit is not None:
        return hit
    lower = name.lower()
    for vendor in VENDORS:
        if family is not None and vendor.family != family:
            continue
        for word in MOVE_NAME_WORDS.get(vendor.family, ()):
            if word in lower:
                return vendor.family, f"name contains {word}"
        if name.endswith(MOVE_SUFFIXES.get(vendor.family, ())):
            return vendor.family, f"{os.path.splitext(name)[1]} file"
    return None


@functools.lru_cache(maxsize=1 << 14)
def _move_directory(directory: str, family: str | None) -> tuple[str, str] | None:
    """The directory criterion of :func:`move_family` (cached: a tree has few directories)."""
    for part in directory.split("/"):
        for vendor in VENDORS:
            if family is not None and vendor.family != family:
                continue
            if part in MOVE_DIRS.get(vendor.family, ()):
                return vendor.family, f"directory {part}/"
    return None


def source_substrings() -> tuple[str, ...]:
    """Lower-case substrings at least one of which every vendor token contains.

    With the case-sensitive driver-API spellings (``cuInit``, ``CUresult``) and the
    ``.cu``/``.cuh`` suffixes this is a *complete* per-file prefilter: a file holding
    none of them cannot hold a finding (every word, macro, API name, device type and
    library name contains one).
    """
    subs: set[str] = {"thc"}
    for table in (SOURCE_PREFIX_WORDS, SOURCE_EXACT_WORDS):
        for words in table.values():
            subs.update(words)
    for vendor in VENDORS:
        subs.update(lib.lower() for lib in vendor.libraries)
    return tuple(sorted(subs))


# --- Process and environment vocabulary (the layering checks) ---------------------------
#
# Couplings with no build edge and no library: running a vendor's command-line tool and
# reading a vendor's environment variable. The audit's source checks (Python and C/C++),
# its artifact check (.rodata strings) and the run-time guard (subprocess and environment
# hooks) flag them in core, and in a backend whose toolkit is not that family's
# (tools/layering/policy.bzl TOOLKITS). docs/layering.md lists what each catches.

# Executables a vendor's toolkit or driver installs, by their file name.
VENDOR_TOOLS: dict[str, tuple[str, ...]] = {
    "cuda": (
        "nvidia-smi",
        "nvidia-debugdump",
        "nvidia-persistenced",
        "nvidia-cuda-mps-control",
        "nvidia-modprobe",
        "nvcc",
        "ptxas",
        "nvlink",
        "fatbinary",
        "cudafe++",
        "cuobjdump",
        "nvdisasm",
        "cu++filt",
        "cuda-gdb",
        "compute-sanitizer",
        "nsys",
        "ncu",
        "nvprof",
    ),
    "rocm": (
        "rocm-smi",
        "amd-smi",
        "rocminfo",
        "rocm_agent_enumerator",
        "hipcc",
        "hipconfig",
        "hipify-perl",
        "hipify-clang",
        "rocprof",
        "rocprofv2",
        "rocgdb",
        "roc-obj-ls",
        "roc-obj-extract",
    ),
}

# Environment variables a vendor's runtime, driver, libraries or container toolkit read:
# a name that starts with one of the prefixes (NVIDIA_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES,
# HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES), has one of the words as a "_"-separated piece
# (TORCH_CUDA_ARCH_LIST, PYTORCH_HIP_ALLOC_CONF), or is one of the names.
VENDOR_ENV_PREFIXES: dict[str, tuple[str, ...]] = {
    "cuda": (
        "CUDA_",
        "CUDNN_",
        "CUBLAS_",
        "CUBLASLT_",
        "CUFFT_",
        "CURAND_",
        "CUSPARSE_",
        "CUSOLVER_",
        "CUPTI_",
        "NCCL_",
        "NVIDIA_",
        "NVCC_",
        "NVRTC_",
        "NVSHMEM_",
        "NVTX_",
        "__NV_",
    ),
    "rocm": (
        "HIP_",
        "HIPCC_",
        "HIPBLASLT_",
        "ROCR_",
        "ROCM_",
        "ROCBLAS_",
        "HSA_",
        "HCC_",
        "AMD_",
        "RCCL_",
        "MIOPEN_",
    ),
}
VENDOR_ENV_WORDS: dict[str, tuple[str, ...]] = {
    "cuda": ("CUDA", "CUDNN", "CUBLAS", "NCCL", "NVML", "NVRTC", "NVIDIA", "NVTX", "CUPTI"),
    "rocm": ("HIP", "ROCM", "ROCR", "RCCL", "MIOPEN", "HSA", "ROCBLAS"),
}
VENDOR_ENV_NAMES: dict[str, tuple[str, ...]] = {
    "cuda": (),
    "rocm": ("GPU_DEVICE_ORDINAL", "GPU_MAX_HW_QUEUES"),
}

_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
_TOOL_FAMILY = {tool: family for family, tools in VENDOR_TOOLS.items() for tool in tools}


def env_family(name: str) -> str | None:
    """The family whose environment variable ``name`` is (``NVIDIA_VISIBLE_DEVICES`` ->
    "cuda"); None for anything that is not an environment variable's name."""
    if not _ENV_NAME.match(name) or "_" not in name.strip("_"):
        return None
    pieces = set(name.split("_"))
    for family in VENDOR_ENV_PREFIXES:
        if name.startswith(VENDOR_ENV_PREFIXES[family]) or name in VENDOR_ENV_NAMES[family]:
            return family
        if pieces.intersection(VENDOR_ENV_WORDS[family]):
            return family
    return None


def tool_family(command: str) -> tuple[str, str] | None:
    """``(family, tool)`` when a command line (or its argv[0]) runs a vendor's tool:
    ``"nvidia-smi -L"``, ``"/usr/bin/rocm-smi"`` -> ("cuda", "nvidia-smi"), ("rocm", ...)."""
    words = command.split()
    if not words:
        return None
    tool = words[0].rsplit("/", 1)[-1].removesuffix(".exe")
    family = _TOOL_FAMILY.get(tool)
    return (family, tool) if family else None


# --- Scanner: macros, namespaces and settings (``torchsplit scan`` categories) -----------
#
# An all-caps name with a vendor word is one of three things, and only the first is a
# ``cuda-api-macro``: torch's own macro around a vendor (TORCH_CUDA_CPP_API,
# C10_CUDA_CHECK, CUDABLAS_GEMM_ARGTYPES(...)); the vendor SDK's own macro or enum
# (CUTLASS_HOST_DEVICE, HIP_R_32F, CUDNN_DATA_FLOAT: ``vendor-api``); or neither (a
# constexpr constant, an enum value, a Python constant: TEST_WITH_ROCM).

# Torch's macro namespaces: a vendor macro spelled with one of these prefixes is torch's.
TORCH_MACRO_PREFIXES: tuple[str, ...] = (
    "C10_",
    "C10D_",
    "AT_",
    "ATEN_",
    "TORCH_",
    "CAFFE2_",
    "CAFFE_",
    "AOTI_",
    "THC",
    "STD_",
)
# Torch's macro shapes whatever the prefix: error checks (CUFFT_CHECK, MIOPEN_CHECK),
# kernel helpers, argument-list and registration macros. (Export macros -- *_API,
# *_EXPORT -- are torch's only with a torch prefix: MIOPEN_BETA_API is MIOpen's.)
TORCH_MACRO_SUFFIX_REGEX = (
    r"_(?:CHECK|ASSERT|ARGTYPES|ARGS|BATCH_RULE|DISPATCH|HOOKS|"
    r"KERNEL_ASSERT|KERNEL_LOOP|ENFORCE|TEMPLATE|STUB\d*)(?:_[A-Z0-9_]*)?$"
)
# The SDKs' own macro and enum spellings, per family.
SDK_MACRO_REGEX: dict[str, str] = {
    "cuda": r"(?:CUTLASS|CUTE|CUB|THRUST|CUBLAS(?:LT)?|CUDNN|CUFFT|CURAND|CUSPARSE(?:LT)?|"
    r"CUSOLVER|CUDSS|NCCL|NVRTC|NVML|NVTX|NVTX3|CUPTI|NVSHMEMX?|CUFILE|CU|CUDART|NV)_\w+"
    r"|CUDA_(?:VERSION|SUCCESS|ERROR_\w+|[RC]_\w+|IPC_HANDLE_SIZE|ARCH_\w+)",
    "rocm": r"(?:HIP|HIPBLAS(?:LT)?|HIPSPARSE(?:LT)?|HIPFFT|HIPRAND|HIPSOLVER|HIPCUB|MIOPEN|"
    r"ROCBLAS|ROCSOLVER|ROCSPARSE|ROCRAND|ROCPRIM|RCCL|ROCSHMEM|ROCTX|HSA|RSMI|AMDSMI)_\w+",
}
# Macros of an SDK prefix that torch defines for itself (feature tests on the SDK's
# version; shims the SDK lacks): a vendor prefix, but torch's.
TORCH_MACRO_IN_SDK_PREFIX_REGEX = r"(?:NCCL_HAS_\w+|CUB_SUPPORTS_\w+|CUB_V\d\w*|CUB_WRAPPER)"
# C++ namespaces of vendor SDKs: ``cutlass::``, ``thrust::``, ``hipcub::`` are vendor API.
SDK_NAMESPACES: dict[str, tuple[str, ...]] = {
    "cuda": ("cutlass", "cute", "cub", "thrust", "nvcuda", "cudnn_frontend", "nvtx3"),
    "rocm": ("hipcub", "rocprim", "ck", "ck_tile", "rocwmma", "hipsparselt"),
}
# Torch's per-vendor global state and settings (at::Context's userEnabledCuDNN(),
# allowTF32CuBLAS(), hasCuDNN(); Python's torch._C._set_cudnn_benchmark): a verb, then
# the vendor library.
VENDOR_SETTING_REGEX = (
    r"(?:[sg]et_?)?(?:[Uu]ser_?[Ee]nabled|[Aa]llow|[Dd]eterministic|[Bb]enchmark|[Hh]as|"
    r"[Ii]mmediate|[Ee]nabled?|[Pp]referred)\w*?_?(?:CuDNN|cuDNN|Cudnn|cudnn|CuBLAS|cuBLAS|"
    r"Cublas|cublas|CuSOLVER|cuSOLVER|Cusolver|CuSPARSE|Cusparse|cusparse|CuFFT|MIOpen|Miopen|"
    r"miopen|ROCm|Rocm|rocm|ROCM|CUDA|Cuda|HIP|Hip|hip|NVRTC|Nvrtc|CUDNN|CUBLAS)\w*"
    # Python's snake-case bindings: torch._C._set_cudnn_enabled, _get_cublas_allow_tf32.
    r"|[sg]et_(?:cudnn|cublas|cusolver|cusparse|cufft|miopen|rocm|hipblaslt)_(?:\w+_)?"
    r"(?:enabled|benchmark|deterministic|allow|immediate|preferred)\w*"
)
# Enums of torch's settings whose members name a vendor library or backend
# (Float32Backend::CUDA, BlasBackend::Cublaslt, LinalgBackend::Cusolver).
SETTING_ENUMS: tuple[str, ...] = (
    "Float32Backend",
    "BlasBackend",
    "LinalgBackend",
    "ROCmFABackend",
    "SDPBackend",
)
# Python modules of vendor SDKs beyond those of :data:`VENDORS` (a module that imports
# one at top level cannot run without the vendor; ``cutlass.range`` is the vendor's API).
SDK_PYTHON_MODULES: dict[str, tuple[str, ...]] = {
    "cuda": ("cutlass", "cutlass_library", "cutlass_cppgen", "cuda", "nvidia", "cupy", "pynvml"),
    "rocm": ("hip", "amdsmi", "pyrsmi", "rocm_smi"),
}
