"""Source lists of torch_hip: torch_cuda's files it translates, and its own.

torch_hip is derived from torch_cuda (DERIVED_BACKENDS in
tools/layering/policy.bzl): TRANSLATED names the torch_cuda files hipify_sources
turns into HIP at build time, by the module that compiles them ("headers" for
every module, "extension" for the Python extension's version script, "python"
for the torch.cuda-like API); REPLACED names the torch_cuda files it does not
translate, each with the reason. tests/torch_hip/test_translation_set.py
checks that together they cover every torch_cuda source.

The standard lists (torch_hip_<module>_sources, as in every backend) hold what
torch_hip writes itself: only what is HIP's own.
"""

_CUDA = "third_device/torch_cuda/"

TRANSLATED = {
    "aten": [
        _CUDA + "csrc/aten/CUDAKernels.cpp",
        _CUDA + "csrc/aten/native/MatmulKernel.cu",
        _CUDA + "csrc/aten/native/PointwiseKernels.cu",
        _CUDA + "csrc/aten/native/ReduceKernels.cu",
    ],
    "distributed": [
        _CUDA + "csrc/distributed/Reduce.cpp",
    ],
    "extension": [
        _CUDA + "_CUDAC.lds",
    ],
    "framework": [
        _CUDA + "csrc/framework/CUDAError.cpp",
        _CUDA + "csrc/framework/CUDAHooks.cpp",
        _CUDA + "csrc/framework/DeviceProperties.cpp",
        _CUDA + "csrc/framework/DeviceScope.cpp",
        _CUDA + "csrc/framework/DynamicLibrary.cpp",
        _CUDA + "csrc/framework/HostStaging.cpp",
    ],
    "headers": [
        _CUDA + "csrc/aten/CUDAKernels.h",
        _CUDA + "csrc/aten/native/BinaryKernels.h",
        _CUDA + "csrc/aten/native/LaunchConfig.cuh",
        _CUDA + "csrc/aten/native/Launchers.h",
        _CUDA + "csrc/distributed/Nccl.h",
        _CUDA + "csrc/distributed/Reduce.h",
        _CUDA + "csrc/framework/CUDAError.h",
        _CUDA + "csrc/framework/CUDAHooks.h",
        _CUDA + "csrc/framework/DeviceProperties.h",
        _CUDA + "csrc/framework/DeviceScope.h",
        _CUDA + "csrc/framework/DynamicLibrary.h",
        _CUDA + "csrc/framework/HostStaging.h",
        _CUDA + "csrc/jit/KernelSource.h",
        _CUDA + "csrc/profiler/CUDAProfilerStubs.h",
        _CUDA + "csrc/profiler/NvtxRange.h",
        _CUDA + "csrc/pybinding/DistributedBindings.h",
        _CUDA + "csrc/pybinding/JitBindings.h",
    ],
    "jit": [
        _CUDA + "csrc/jit/KernelSource.cpp",
    ],
    "profiler": [
        _CUDA + "csrc/profiler/CUDAProfilerStubs.cpp",
    ],
    "pybinding": [
        _CUDA + "csrc/pybinding/DistributedBindings.cpp",
        _CUDA + "csrc/pybinding/Module.cpp",
    ],
    "python": [
        _CUDA + "torch_cuda/core/__init__.py",
        _CUDA + "torch_cuda/core/memory.py",
        _CUDA + "torch_cuda/core/properties.py",
        _CUDA + "torch_cuda/core/runtime.py",
        _CUDA + "torch_cuda/core/streams.py",
    ],
}

_NO_FUSER = "NVRTC fuser: torch_hip registers none (csrc/pybinding/HipJitBindings.cpp says why)"

REPLACED = {
    _CUDA + "csrc/distributed/Nccl.cpp": "NCCL from the nvidia-nccl-cu13 wheel; RCCL is not packaged in Debian 12 (csrc/distributed/Rccl.cpp)",
    _CUDA + "csrc/jit/DriverApi.cpp": _NO_FUSER + "; cudaGetDriverEntryPointByVersion has no HIP equivalent",
    _CUDA + "csrc/jit/DriverApi.h": _NO_FUSER,
    _CUDA + "csrc/jit/FusedKernels.cpp": _NO_FUSER,
    _CUDA + "csrc/jit/FusedKernels.h": _NO_FUSER,
    _CUDA + "csrc/jit/Nvrtc.cpp": _NO_FUSER + "; nvrtcGetSupportedArchs has no hiprtc equivalent",
    _CUDA + "csrc/jit/Nvrtc.h": _NO_FUSER,
    _CUDA + "csrc/profiler/NvtxRange.cpp": "NVTX maps to roctracer's roctx, not packaged in Debian 12 (csrc/profiler/RoctxRange.cpp)",
    _CUDA + "csrc/pybinding/JitBindings.cpp": "binds NVRTC and the NVRTC fuser (csrc/pybinding/HipJitBindings.cpp)",
    _CUDA + "torch_cuda/__init__.py": "sets CUDA_MODULE_LOADING and imports the NVRTC fuser and NCCL (torch_hip/__init__.py)",
    _CUDA + "torch_cuda/_libraries.py": "finds NVRTC and NCCL among NVIDIA's wheels for the fuser and the nccl backend, which torch_hip has not",
    _CUDA + "torch_cuda/backends/__init__.py": "TF32 settings: HIP's matmul has none",
    _CUDA + "torch_cuda/backends/settings.py": "TF32 settings: HIP's matmul has none",
    _CUDA + "torch_cuda/distributed/__init__.py": "the nccl process-group backend; RCCL is not packaged in Debian 12",
    _CUDA + "torch_cuda/jit/__init__.py": _NO_FUSER,
    _CUDA + "torch_cuda/testing.py": "capabilities differ (torch_hip/testing.py)",
}

# The project's renames, applied after torch.utils.hipify's CUDA API mapping
# (substrings, longest first, in paths too): every name of torch_cuda's becomes
# this backend's -- package (torch_cuda -> torch_hip), extension (_CUDAC ->
# _HIPC), classes (CudaHooks -> HipHooks), files (CUDAHooks.h -> HIPHooks.h),
# device type, messages.
RENAMES = {
    "CUDA": "HIP",
    "Cuda": "Hip",
    "cuda": "hip",
}

torch_hip_framework_sources = []

torch_hip_aten_sources = []

torch_hip_jit_sources = []

torch_hip_distributed_sources = [
    "third_device/torch_hip/csrc/distributed/Rccl.cpp",
]

torch_hip_profiler_sources = [
    "third_device/torch_hip/csrc/profiler/RoctxRange.cpp",
]

torch_hip_pybinding_sources = [
    "third_device/torch_hip/csrc/pybinding/HipJitBindings.cpp",
]

def backend_sources():
    """torch_hip's own source lists, keyed by module.

    Returns:
      A dict from each of BACKEND_MODULES to its list of sources.
    """
    return {
        "aten": torch_hip_aten_sources,
        "distributed": torch_hip_distributed_sources,
        "framework": torch_hip_framework_sources,
        "jit": torch_hip_jit_sources,
        "profiler": torch_hip_profiler_sources,
        "pybinding": torch_hip_pybinding_sources,
    }
