"""Source lists of the torchsplit monorepo, PyTorch-style.

BUILD files load these lists; tools (the reorganiser's self-check) read them
with a Starlark evaluator. Paths are relative to the repository root. Core
lists build //core:torch_cpu and //core:_C. Each device backend keeps its own
lists, one per standard module, in third_device/<backend>/build_variables.bzl
(built into //third_device/<backend>:<module>): adding a backend edits
nothing here.
"""

# ---- core: c10 -> aten -> torch/csrc, CPU only -----------------------------

c10_sources = [
    "core/c10/core/CachingAllocator.cpp",
    "core/c10/core/CpuHooks.cpp",
    "core/c10/core/Device.cpp",
    "core/c10/core/DeviceRegistry.cpp",
    "core/c10/core/EventPool.cpp",
    "core/c10/core/RegistrationSite.cpp",
    "core/c10/core/Stream.cpp",
    "core/c10/core/Warning.cpp",
]

aten_cpu_sources = [
    "core/aten/Dispatcher.cpp",
    "core/aten/Functions.cpp",
    "core/aten/Tensor.cpp",
    "core/aten/native/cpu/Blas.cpp",
    "core/aten/native/cpu/CpuCapability.cpp",
    "core/aten/native/cpu/CpuKernels.cpp",
]

# The CPU's vectorised kernels, compiled once per CPU capability (baseline,
# AVX2, AVX-512) into //core:cpu_kernels and picked at run time, as upstream
# compiles aten/src/ATen/native/cpu.
aten_cpu_kernel_sources = [
    "core/aten/native/cpu/VecKernels.cpp",
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
    "core/csrc/CpuBindings.cpp",
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
