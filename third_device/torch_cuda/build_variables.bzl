"""Source lists of torch_cuda: one list per standard module.

Repository-relative paths, one list per module of tools/build_defs/backend.bzl
(BACKEND_MODULES). This package's BUILD file loads backend_sources(); the
reorg self-check (tools/reorg/torchsplit_self.toml) reads every
third_device/*/build_variables.bzl, so a backend's lists live only here.
"""

torch_cuda_framework_sources = [
    "third_device/torch_cuda/csrc/framework/CUDAError.cpp",
    "third_device/torch_cuda/csrc/framework/CUDAHooks.cpp",
    "third_device/torch_cuda/csrc/framework/DeviceProperties.cpp",
    "third_device/torch_cuda/csrc/framework/DeviceScope.cpp",
    "third_device/torch_cuda/csrc/framework/DynamicLibrary.cpp",
    "third_device/torch_cuda/csrc/framework/HostStaging.cpp",
]

torch_cuda_aten_sources = [
    "third_device/torch_cuda/csrc/aten/CUDAKernels.cpp",
    "third_device/torch_cuda/csrc/aten/native/MatmulKernel.cu",
    "third_device/torch_cuda/csrc/aten/native/PointwiseKernels.cu",
    "third_device/torch_cuda/csrc/aten/native/ReduceKernels.cu",
]

torch_cuda_jit_sources = [
    "third_device/torch_cuda/csrc/jit/DriverApi.cpp",
    "third_device/torch_cuda/csrc/jit/FusedKernels.cpp",
    "third_device/torch_cuda/csrc/jit/KernelSource.cpp",
    "third_device/torch_cuda/csrc/jit/Nvrtc.cpp",
]

torch_cuda_distributed_sources = [
    "third_device/torch_cuda/csrc/distributed/Nccl.cpp",
    "third_device/torch_cuda/csrc/distributed/Reduce.cpp",
]

torch_cuda_profiler_sources = [
    "third_device/torch_cuda/csrc/profiler/CUDAProfilerStubs.cpp",
    "third_device/torch_cuda/csrc/profiler/NvtxRange.cpp",
]

torch_cuda_pybinding_sources = [
    "third_device/torch_cuda/csrc/pybinding/DistributedBindings.cpp",
    "third_device/torch_cuda/csrc/pybinding/JitBindings.cpp",
    "third_device/torch_cuda/csrc/pybinding/Module.cpp",
]

def backend_sources():
    """The source lists of torch_cuda, keyed by module.

    Returns:
      A dict from each of BACKEND_MODULES to its list of sources.
    """
    return {
        "aten": torch_cuda_aten_sources,
        "distributed": torch_cuda_distributed_sources,
        "framework": torch_cuda_framework_sources,
        "jit": torch_cuda_jit_sources,
        "profiler": torch_cuda_profiler_sources,
        "pybinding": torch_cuda_pybinding_sources,
    }
