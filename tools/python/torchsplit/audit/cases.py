"""The couplings that need no build edge: link, dlopen, Python import, config,
other repositories. Each is a :class:`~torchsplit.audit.mutations.Mutation` the harness
injects into its copy of the checkout; ``expect`` names every layer that must catch it."""

from __future__ import annotations

from pathlib import Path

from torchsplit.errors import TorchsplitError

_EXTENSION_DEPS = '    deps = [":torch_cpu_api"],\n'
_PROFILE_ENTER = "    def __enter__(self) -> profile:\n"
_PROFILE = "core/torch_core/profiler/_profile.py"
_DEVICE_CPP = "core/c10/core/Device.cpp"


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    # An anchor must name one place: a second match (a BUILD file that gained a
    # rule with the same attribute) would silently mutate the wrong rule.
    count = text.count(old)
    if count != 1:
        found = "not found" if count == 0 else f"found {count} times"
        raise TorchsplitError(f"mutation anchor {old.strip()!r} {found}", rel)
    path.write_text(text.replace(old, new, 1))


def append(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.write_text(path.read_text() + text)


def _device_cpp_function(root: Path, header: str, comment: str, function: str) -> None:
    """Adds an #include and a function to core/c10/core/Device.cpp."""
    edit(root, _DEVICE_CPP, "#include <charconv>\n", f"#include <charconv>\n#include <{header}>\n")
    append(root, _DEVICE_CPP, f"\nnamespace c10 {{\n// {comment}\n{function}}}  // namespace c10\n")


def dlopen_split_literal(root: Path) -> None:
    _device_cpp_function(
        root,
        "dlfcn.h",
        "Optional accelerator runtime, if one is installed.",
        "void* probe_runtime() {\n"
        '  return dlopen("libcu" "dart.so.13", RTLD_LAZY | RTLD_LOCAL);\n}\n',
    )


def python_import_backend(root: Path) -> None:
    edit(
        root,
        _PROFILE,
        _PROFILE_ENTER,
        _PROFILE_ENTER + "        import importlib\n\n        import torch_emu  # noqa: F401\n\n"
        "        try:\n"
        '            importlib.import_module("torch_" + "cu" + "da")\n'
        "        except ImportError:\n            pass\n",
    )


def python_ctypes_nvml(root: Path) -> None:
    edit(
        root,
        _PROFILE,
        _PROFILE_ENTER,
        _PROFILE_ENTER + "        import ctypes\n\n        try:\n"
        '            ctypes.CDLL("libnvidia-ml.so.1")\n'
        "        except OSError:\n            pass\n",
    )


def second_toolkit_repository(root: Path) -> None:
    toolkit = next(
        (p for p in ("/usr/local/cuda", "/usr/local/cuda-13.0") if Path(p).is_dir()), None
    )
    if toolkit is None:  # no toolkit here: a stand-in directory is the same graph
        stub = root / "cuda_stub" / "lib64"
        stub.mkdir(parents=True)
        (stub / "libcudart.so.13").write_bytes(b"")
        toolkit = str(root / "cuda_stub")
    append(
        root,
        "WORKSPACE",
        "\n# The CUDA runtime under another name.\nnew_local_repository(\n"
        f'    name = "nv_runtime",\n    path = "{toolkit}",\n'
        '    build_file_content = """cc_library(name = "cudart", srcs = ["lib64/libcudart.so.13"], '
        'visibility = ["//visibility:public"])""",\n)\n',
    )
    edit(root, "core/BUILD.bazel", _EXTENSION_DEPS,
         '    deps = [":torch_cpu_api", "@nv_runtime//:cudart"],\n')  # fmt: skip


def _tools_macro(root: Path, name: str, symbol: str, text: str, deps_line: str) -> None:
    """A neutral-looking //tools/build_defs macro that core's BUILD file loads and calls."""
    (root / "tools" / "build_defs" / f"{name}.bzl").write_text(text)
    edit(
        root,
        "core/BUILD.bazel",
        'load("//tools/build_defs:sources.bzl", "package_sources")\n',
        f'load("//tools/build_defs:{name}.bzl", "{symbol}")\n'
        'load("//tools/build_defs:sources.bzl", "package_sources")\n',
    )
    edit(root, "core/BUILD.bazel", _EXTENSION_DEPS, deps_line)


def wrapped_select(root: Path) -> None:
    _tools_macro(
        root,
        "accel",
        "if_accelerated",
        '"""if_accelerated: a neutral-looking wrapper."""\n\n'
        "def if_accelerated(yes, no = []):\n"
        '    """yes when an accelerator is enabled, else no."""\n'
        '    return select({"@rules_cuda//cuda:is_enabled": yes, "//conditions:default": no})\n',
        '    deps = [":torch_cpu_api"] + if_accelerated([]),\n',
    )


def include_dotdot(root: Path) -> None:
    edit(
        root,
        _DEVICE_CPP,
        '#include "c10/core/Device.h"\n',
        '#include "c10/core/Device.h"\n'
        '#include "../../../third_device/torch_emu/csrc/framework/EmuDriver.h"\n',
    )


def emu_inactive_select(root: Path) -> None:
    rel = "third_device/torch_emu/BUILD.bazel"
    edit(
        root,
        rel,
        "device_backend(\n",
        'config_setting(\n    name = "borrow_cuda_streams",\n'
        '    define_values = {"torch_emu_borrow_cuda": "1"},\n)\n\ndevice_backend(\n',
    )
    edit(
        root,
        rel,
        '    name = "torch_emu",\n    extension = "_EMUC",\n',
        '    name = "torch_emu",\n    extension = "_EMUC",\n'
        '    module_deps = {"framework": select({\n'
        '        ":borrow_cuda_streams": ["//third_device/torch_cuda:framework"],\n'
        '        "//conditions:default": [],\n    })},\n',
    )


def public_alias(root: Path) -> None:
    append(
        root,
        "third_device/torch_emu/BUILD.bazel",
        '\nalias(\n    name = "emu_framework",\n    actual = ":framework",\n'
        '    visibility = ["//visibility:public"],\n)\n',
    )


def linkopts_cudart(root: Path) -> None:
    edit(
        root,
        "core/BUILD.bazel",
        'load("@rules_python//python:defs.bzl", "py_library")\n',
        'load("@rules_cc//cc:defs.bzl", "cc_library")\n'
        'load("@rules_python//python:defs.bzl", "py_library")\n',
    )
    library = '\ncc_library(\n    name = "accelerator_runtime",\n    linkopts = ["-lcudart"],\n)\n'
    append(root, "core/BUILD.bazel", library)
    edit(root, "core/BUILD.bazel", _EXTENSION_DEPS,
         '    deps = [":accelerator_runtime", ":torch_cpu_api"],\n')  # fmt: skip


def genrule_tools(root: Path) -> None:
    append(
        root,
        "core/BUILD.bazel",
        '\ngenrule(\n    name = "device_version",\n    outs = ["device_version.txt"],\n'
        '    cmd = "$(location @local_cuda//:nvcc) --version > $@",\n'
        '    tools = ["@local_cuda//:nvcc"],\n)\n',
    )


# -- round 3 (issue 24): every pair of layers, processes and environment, effective flags,
# device sources in core, derived backends ---------------------------------------------
_EMU_DISTRIBUTED = "third_device/torch_emu/torch_emu/distributed/__init__.py"
_CUDA_DYNLIB = "third_device/torch_cuda/csrc/framework/DynamicLibrary.cpp"


def core_python_runs_nvidia_smi(root: Path) -> None:
    """Core's profiler asks nvidia-smi for the devices (a process coupling, no import)."""
    edit(
        root,
        _PROFILE,
        _PROFILE_ENTER,
        _PROFILE_ENTER + "        import subprocess\n\n        try:\n"
        '            subprocess.run(["nvidia-smi", "-L"], capture_output=True, check=False)\n'
        "        except OSError:\n            pass\n",
    )


def emu_python_imports_cuda(root: Path) -> None:
    """torch_emu's distributed package reuses torch_cuda's collectives when present."""
    edit(
        root,
        _EMU_DISTRIBUTED,
        "from collections.abc import Sequence\n",
        "from collections.abc import Sequence\n\ntry:\n"
        "    import torch_cuda  # noqa: F401  (reuse its collectives when present)\n"
        "except ImportError:\n    torch_cuda = None\n",
    )


def cuda_cpp_dlopens_emu(root: Path) -> None:
    """torch_cuda's C++ loads torch_emu's extension at run time."""
    edit(
        root,
        _CUDA_DYNLIB,
        "namespace torch_cuda {\n",
        "namespace torch_cuda {\n\n// Borrow the emulator's host streams when it is installed.\n"
        'void* borrow_emulator() { return dlopen("_EMUC.so", RTLD_LAZY | RTLD_LOCAL); }\n',
    )


def core_cpp_reads_nvidia_env(root: Path) -> None:
    """Core's C++ reads the container toolkit's device list."""
    _device_cpp_function(
        root,
        "cstdlib",
        "Devices the container runtime exposes, if any.",
        'const char* visible_devices() {\n  return std::getenv("NVIDIA_VISIBLE_DEVICES");\n}\n',
    )


def linkopts_via_macro(root: Path) -> None:
    """A neutral //tools macro returns -lnvToolsExt into core's extension's linkopts."""
    _tools_macro(
        root,
        "profiling",
        "profiling_linkopts",
        '"""profiling_linkopts: what the profiler links with."""\n\n'
        "def profiling_linkopts():\n"
        '    """Link options of targets that record profiler ranges."""\n'
        '    return ["-l" + "nvTools" + "Ext"]\n',
        _EXTENSION_DEPS + "    linkopts = profiling_linkopts(),\n",
    )


def core_cu_source(root: Path) -> None:
    """A .cu file listed among core's sources (build_variables.bzl, as upstream lists them)."""
    (root / "core" / "c10" / "core" / "DeviceProbe.cu").write_text(
        "// Probes the accelerator.\nint device_probe() { return 0; }\n"
    )
    edit(
        root,
        "build_variables.bzl",
        '    "core/c10/core/Device.cpp",\n',
        '    "core/c10/core/Device.cpp",\n    "core/c10/core/DeviceProbe.cu",\n',
    )


def emu_to_cuda_toolkit(root: Path) -> None:
    """torch_emu's headers use the CUDA toolkit's: a toolkit that is not torch_emu's."""
    edit(
        root,
        "third_device/torch_emu/BUILD.bazel",
        'device_backend(\n    name = "torch_emu",\n    extension = "_EMUC",\n',
        'device_backend(\n    name = "torch_emu",\n    extension = "_EMUC",\n'
        '    module_deps = {"headers": ["@local_cuda//:headers"]},\n',
    )


DERIVED_PARENT_SOURCE = "third_device/torch_emu/csrc/framework/EmuDriver.cpp"


def derived_backend(root: Path) -> None:
    """A derived backend torch_dx (policy DERIVED_BACKENDS: from torch_emu via genrule):
    its translation genrule reads a torch_emu source (allowed), and one of its libraries
    links torch_emu:framework (forbidden)."""
    edit(
        root,
        "tools/layering/policy.bzl",
        "DERIVED_BACKENDS = {\n",
        'DERIVED_BACKENDS = {\n    "torch_dx": {"from": "torch_emu", "via": ["genrule"]},\n',
    )
    # No exports_files() here: device_backend() exports torch_emu's sources to the backends
    # DERIVED_BACKENDS derives from it (derived_readers in tools/layering/rules.bzl).
    (root / "third_device" / "torch_dx").mkdir()
    (root / "third_device" / "torch_dx" / "BUILD.bazel").write_text(
        "# A derived backend: its sources are translated from torch_emu's.\n"
        'load("@rules_cc//cc:defs.bzl", "cc_library")\n'
        'load("//tools/layering:graph.bzl", "layer_graph_test")\n'
        'load("//tools/layering:rules.bzl", "backend_visibility")\n\n'
        "genrule(\n"
        '    name = "translated",\n'
        '    srcs = ["//third_device/torch_emu:csrc/framework/EmuDriver.cpp"],\n'
        '    outs = ["DxDriver.cpp"],\n'
        "    cmd = \"sed -e 's/torch_emu/torch_dx/g' $< > $@\",\n"
        '    visibility = backend_visibility("torch_dx"),\n'
        ")\n\n"
        "cc_library(\n"
        '    name = "framework",\n'
        '    deps = ["//third_device/torch_emu:framework"],\n'
        '    visibility = backend_visibility("torch_dx"),\n'
        ")\n\n"
        'layer_graph_test(\n    name = "layering_graph_test",\n    backend = "torch_dx",\n'
        '    layer = "backend",\n)\n'
    )
