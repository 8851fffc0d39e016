"""Source lists of the torchsplit monorepo, PyTorch-style.

BUILD files load these lists; tools (the reorganiser's self-check) read them
with a Starlark evaluator. Paths are relative to the repository root. Core
lists build //core:torch_cpu and //core:_C; each device backend has one list
per standard module, built into //third_device/<backend>:<module>.
"""

# The standard modules of a device backend, in dependency order. Each backend
# package declares one target per module (see tools/build_defs/backend.bzl).
BACKEND_MODULES = ["framework", "aten", "jit", "distributed", "profiler", "pybinding"]

# ---- core: c10 -> aten -> torch/csrc, CPU only -----------------------------

c10_sources = [
    "core/c10/core/CachingAllocator.cpp",
    "core/c10/core/CpuHooks.cpp",
    "core/c10/core/Device.cpp",
    "core/c10/core/DeviceRegistry.cpp",
    "core/c10/core/Stream.cpp",
]

aten_cpu_sources = [
    "core/aten/Dispatcher.cpp",
    "core/aten/Functions.cpp",
    "core/aten/Tensor.cpp",
    "core/aten/native/cpu/CpuKernels.cpp",
]

# torch/csrc's runtime parts (linked into libtorch_core.so, where backends
# register into them): the profiler, and the jit's fuser seam (kernel
# libraries, launchers of host-compiled kernels, fused dispatcher ops).
torch_cpu_sources = [
    "core/csrc/jit/CpuFusedLauncher.cpp",
    "core/csrc/jit/FusedLaunchers.cpp",
    "core/csrc/jit/FusedOps.cpp",
    "core/csrc/jit/KernelLibraries.cpp",
    "core/csrc/profiler/Profiler.cpp",
    "core/csrc/profiler/ProfilerStubs.cpp",
]

# Python bindings of core: the torch_core._C extension.
torch_python_sources = [
    "core/csrc/DeviceBindings.cpp",
    "core/csrc/JitBindings.cpp",
    "core/csrc/Module.cpp",
    "core/csrc/ProfilerBindings.cpp",
    "core/csrc/TensorBindings.cpp",
]

def libtorch_cpu_sources():
    """Every C++ source of //core:torch_cpu.

    Returns:
      The c10, ATen CPU and torch/csrc runtime lists, in that order.
    """
    return c10_sources + aten_cpu_sources + torch_cpu_sources

# ---- third_device/torch_cuda ----------------------------------------------

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

# ---- third_device/torch_emu: the emulated accelerator ----------------------

torch_emu_framework_sources = [
    "third_device/torch_emu/csrc/framework/EmuDriver.cpp",
    "third_device/torch_emu/csrc/framework/EmuHooks.cpp",
    "third_device/torch_emu/csrc/framework/EmuStream.cpp",
]

torch_emu_aten_sources = [
    "third_device/torch_emu/csrc/aten/EmuKernels.cpp",
]

# Runs torch_core.jit's host-compiled fused kernels on emu streams.
torch_emu_jit_sources = [
    "third_device/torch_emu/csrc/jit/EmuFusedLauncher.cpp",
]

# The eccl process-group backend's device side: collectives on emu streams.
torch_emu_distributed_sources = [
    "third_device/torch_emu/csrc/distributed/EmuCollective.cpp",
]

torch_emu_profiler_sources = [
    "third_device/torch_emu/csrc/profiler/EmuProfilerStubs.cpp",
]

torch_emu_pybinding_sources = [
    "third_device/torch_emu/csrc/pybinding/DistributedBindings.cpp",
    "third_device/torch_emu/csrc/pybinding/Module.cpp",
]

# ---- per-backend lookup ----------------------------------------------------

_BACKEND_SOURCES = {
    "torch_cuda": {
        "aten": torch_cuda_aten_sources,
        "distributed": torch_cuda_distributed_sources,
        "framework": torch_cuda_framework_sources,
        "jit": torch_cuda_jit_sources,
        "profiler": torch_cuda_profiler_sources,
        "pybinding": torch_cuda_pybinding_sources,
    },
    "torch_emu": {
        "aten": torch_emu_aten_sources,
        "distributed": torch_emu_distributed_sources,
        "framework": torch_emu_framework_sources,
        "jit": torch_emu_jit_sources,
        "profiler": torch_emu_profiler_sources,
        "pybinding": torch_emu_pybinding_sources,
    },
}

def backend_sources(backend):
    """The source lists of one device backend, keyed by module.

    Args:
      backend: the backend's directory name under third_device/, e.g. "torch_cuda".

    Returns:
      A dict from each of BACKEND_MODULES to its list of sources.
    """
    if backend not in _BACKEND_SOURCES:
        fail("build_variables.bzl has no source lists for backend '%s' (known: %s)" % (backend, ", ".join(sorted(_BACKEND_SOURCES))))
    return _BACKEND_SOURCES[backend]
