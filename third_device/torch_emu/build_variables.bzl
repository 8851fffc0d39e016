"""Source lists of torch_emu, an emulated accelerator: one list per standard module.

Repository-relative paths, one list per module of tools/build_defs/backend.bzl
(BACKEND_MODULES). This package's BUILD file loads backend_sources(); the
reorg self-check (tools/reorg/torchsplit_self.toml) reads every
third_device/*/build_variables.bzl, so a backend's lists live only here.
"""

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

def backend_sources():
    """The source lists of torch_emu, keyed by module.

    Returns:
      A dict from each of BACKEND_MODULES to its list of sources.
    """
    return {
        "aten": torch_emu_aten_sources,
        "distributed": torch_emu_distributed_sources,
        "framework": torch_emu_framework_sources,
        "jit": torch_emu_jit_sources,
        "profiler": torch_emu_profiler_sources,
        "pybinding": torch_emu_pybinding_sources,
    }
