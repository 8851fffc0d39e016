"""The audit's source, BUILD-file and run-time checks on small trees (no Bazel)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from builds import REPO
from torchsplit.audit.policy import load_policy
from torchsplit.audit.sources import check_sources

POLICY = load_policy(REPO / "tools" / "layering" / "policy.bzl")
# The small trees below have these; the checkout has every backend under third_device/.
PACKAGES = ["core", "third_device/torch_cuda", "third_device/torch_emu"]
CHECKOUT_PACKAGES = [
    "core",
    *sorted(f"third_device/{p.name}" for p in (REPO / "third_device").iterdir() if p.is_dir()),
]


def tree(tmp: Path, files: dict[str, str]) -> Path:
    base = {
        "core/BUILD.bazel": 'py_library(name = "torch_core")\n',
        "third_device/torch_cuda/BUILD.bazel": 'device_backend(name = "torch_cuda")\n',
        "third_device/torch_cuda/torch_cuda/__init__.py": "",
        "third_device/torch_emu/BUILD.bazel": 'device_backend(name = "torch_emu")\n',
        "third_device/torch_emu/torch_emu/__init__.py": "",
        "third_device/torch_emu/csrc/framework/EmuDriver.h": "",
    }
    for rel, text in {**base, **files}.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text)
    return tmp


def messages(tmp: Path, files: dict[str, str]) -> list[str]:
    return [f.render() for f in check_sources(tree(tmp, files), POLICY, PACKAGES)]


def test_the_checkout_is_clean() -> None:
    assert [f.render() for f in check_sources(REPO, POLICY, CHECKOUT_PACKAGES)] == []


def test_python_imports_and_computed_loads(tmp_path: Path) -> None:
    got = messages(
        tmp_path,
        {
            "core/torch_core/prof.py": "import importlib, ctypes\n"
            "def f(name):\n"
            "    import torch_emu\n"
            '    importlib.import_module("torch_" + "cu" + "da")\n'
            "    __import__(name)\n"
            '    ctypes.CDLL("libnvidia-ml.so.1")\n'
            "    ctypes.cdll.LoadLibrary\n"
            "    from pynvml import nvmlInit\n",
            "core/torch_core/_backends.py": "import importlib\n"
            "def load(ep):\n    return importlib.import_module(ep)\n",
        },
    )
    text = "\n".join(got)
    assert "prof.py:3: imports torch_emu: backend package torch_emu" in text
    assert "import_module('torch_cuda') loads backend package torch_cuda" in text
    assert "prof.py:5: __import__(a computed name) outside the allowlisted loaders" in text
    assert "CDLL('libnvidia-ml.so.1') loads a cuda vendor" in text
    assert "ctypes.cdll loads a library outside the allowlisted loaders" in text
    assert "imports pynvml: a cuda vendor module" in text
    assert "_backends.py" not in text  # the allowlisted loader, with a computed name


def test_c_dlopen_split_literal_and_dotdot_include(tmp_path: Path) -> None:
    got = messages(
        tmp_path,
        {
            "core/c10/core/Probe.cpp": '#include "../../../third_device/torch_emu/csrc/'
            'framework/EmuDriver.h"\n#include "../util/Ok.h"\n'
            'void* p() { return dlopen("libcu" /* split */ "dart.so.13", 0); }\n'
            '// dlopen("libcuda.so") in a comment is no call\n',
            "core/csrc/jit/KernelLibraries.cpp": "void* q(const char* p) {\n"
            "  return dlopen(p, 0);\n}\n",
        },
    )
    text = "\n".join(got)
    assert "Probe.cpp:3: dlopen() outside the allowlisted loaders" in text
    assert "Probe.cpp:3: string 'libcudart.so.13' names a cuda vendor library" in text
    assert "resolves to third_device/torch_emu/csrc/framework/EmuDriver.h, outside //core" in text
    assert "Ok.h" not in text and "KernelLibraries" not in text and ":4:" not in text


def test_build_files(tmp_path: Path) -> None:
    got = messages(
        tmp_path,
        {
            "core/BUILD.bazel": 'load("@rules_cuda//cuda:defs.bzl", "if_cuda")\n'
            'load("//tools:accel.bzl", "if_accel")\n'
            'cc_library(name = "a", linkopts = ["-lcudart"], copts = ["-I/usr/local/cuda/include"],'
            ' deps = ["@cuda_wheels//:nvrtc_headers"] + if_accel([]))\n'
            'layer_graph_test(name = "t", layer = "core")\ncc_library(name = "late")\n',
            "tools/accel.bzl": "def if_accel(a):\n"
            '    return select({"@rules_cuda//cuda:is_enabled": a, "//conditions:default": []})\n',
            "third_device/torch_emu/BUILD.bazel": 'device_backend(name = "torch_emu", deps = '
            'select({":x": ["//third_device/torch_cuda:framework"]}))\n'
            'alias(name = "p", actual = ":framework", visibility = ["//visibility:public"])\n',
        },
    )
    text = "\n".join(got)
    assert "core/BUILD.bazel:1: @rules_cuda//cuda:defs.bzl is in @rules_cuda" in text
    assert "linkopts has '-lcudart', a cuda library" in text
    assert "copts has '-I/usr/local/cuda/include'" in text
    assert "@cuda_wheels//:nvrtc_headers is in @cuda_wheels" in text
    assert "tools/accel.bzl:2: @rules_cuda//cuda:is_enabled" in text
    assert "(loaded by core/BUILD.bazel)" in text
    assert "cc_library() after layer_graph_test()" in text
    assert "//third_device/torch_cuda:framework is another backend's label" in text
    assert "a public target in a backend package" in text
    assert "alias() after device_backend()" in text


def test_runtime_guard_catches_core_code_only(tmp_path: Path) -> None:
    """Core code importing a backend or dlopening a vendor library raises and is recorded;
    a test (not core) importing the same is fine."""
    core = tmp_path / "core" / "torch_core"
    core.mkdir(parents=True)
    (core / "__init__.py").write_text("")
    (core / "prof.py").write_text(
        "import ctypes, importlib\n"
        "def start():\n    importlib.import_module('torch_' + 'fake')\n"
        "def nvml():\n    try:\n        ctypes.CDLL('libnvidia-ml.so.1')\n"
        "    except OSError:\n        pass\n"
    )
    (tmp_path / "torch_fake").mkdir()
    (tmp_path / "torch_fake" / "__init__.py").write_text("")
    script = (
        "import sys\n"
        f"sys.path[:0] = [{str(tmp_path)!r}, {str(tmp_path / 'core')!r}, "
        f"{str(REPO / 'tools' / 'python')!r}]\n"
        "from pathlib import Path\n"
        "from torchsplit.audit.runtime import install, LayeringViolation\n"
        f"g = install(Path({str(tmp_path)!r}), [Path({str(core)!r})], ['torch_fake'], [])\n"
        "from torch_core import prof\n"
        "for fn in (prof.start, prof.nvml):\n"
        "    try:\n        fn()\n    except LayeringViolation:\n        pass\n"
        "import torch_fake\n"
        "print(len(g.violations)); print(chr(10).join(g.violations))\n"
    )
    (tmp_path / "main.py").write_text(script)
    out = subprocess.run(
        [sys.executable, str(tmp_path / "main.py")], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == "2", out
    assert "core/torch_core/prof.py:3 imports backend package torch_fake" in out[1]
    assert "prof.py:6 loads cuda vendor library libnvidia-ml.so.1" in out[2]
