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


def dlopen_split_literal(root: Path) -> None:
    edit(root, _DEVICE_CPP, "#include <charconv>\n", "#include <charconv>\n#include <dlfcn.h>\n")
    append(
        root,
        _DEVICE_CPP,
        "\nnamespace c10 {\n// Optional accelerator runtime, if one is installed.\n"
        "void* probe_runtime() {\n"
        '  return dlopen("libcu" "dart.so.13", RTLD_LAZY | RTLD_LOCAL);\n}\n}  // namespace c10\n',
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


def wrapped_select(root: Path) -> None:
    (root / "tools" / "build_defs" / "accel.bzl").write_text(
        '"""if_accelerated: a neutral-looking wrapper."""\n\n'
        "def if_accelerated(yes, no = []):\n"
        '    """yes when an accelerator is enabled, else no."""\n'
        '    return select({"@rules_cuda//cuda:is_enabled": yes, "//conditions:default": no})\n'
    )
    edit(
        root,
        "core/BUILD.bazel",
        'load("//tools/build_defs:sources.bzl", "package_sources")\n',
        'load("//tools/build_defs:accel.bzl", "if_accelerated")\n'
        'load("//tools/build_defs:sources.bzl", "package_sources")\n',
    )
    edit(root, "core/BUILD.bazel", _EXTENSION_DEPS,
         '    deps = [":torch_cpu_api"] + if_accelerated([]),\n')  # fmt: skip


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
