"""The audit's source and BUILD-file checks, the effective-flags check and the run-time
guard, on small trees (no Bazel): every pair of layers, processes and the environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from builds import REPO
from torchsplit.audit.actions import Action, check_flags
from torchsplit.audit.layers import Layers
from torchsplit.audit.policy import Derived, load_policy
from torchsplit.audit.sources import check_sources

POLICY = load_policy(REPO / "tools" / "layering" / "policy.bzl")
# The small trees below have these; the checkout has every backend under third_device/.
PACKAGES = ["core", "third_device/torch_cuda", "third_device/torch_emu"]
BASE = {
    "core/BUILD.bazel": 'py_library(name = "torch_core")\n',
    "third_device/torch_cuda/BUILD.bazel": 'device_backend(name = "torch_cuda", '
    'extension = "_CUDAC")\n',
    "third_device/torch_cuda/torch_cuda/__init__.py": "",
    "third_device/torch_emu/BUILD.bazel": 'device_backend(name = "torch_emu", '
    'extension = "_EMUC")\n',
    "third_device/torch_emu/torch_emu/__init__.py": "",
    "third_device/torch_emu/csrc/framework/EmuDriver.h": "",
}

CHECKOUT_PACKAGES = [
    "core",
    *sorted(f"third_device/{p.name}" for p in (REPO / "third_device").iterdir() if p.is_dir()),
]


def tree(tmp: Path, files: dict[str, str]) -> Path:
    for rel, text in {**BASE, **files}.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text)
    return tmp


def messages(tmp: Path, files: dict[str, str]) -> str:
    return "\n".join(f.render() for f in check_sources(tree(tmp, files), POLICY, PACKAGES))


def test_the_checkout_is_clean() -> None:
    assert [f.render() for f in check_sources(REPO, POLICY, CHECKOUT_PACKAGES)] == []


def test_python_imports_and_computed_loads(tmp_path: Path) -> None:
    text = messages(
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
    assert (
        "PYTHON [core-to-backend] core/torch_core/prof.py:3: core -> torch_emu: imports "
        "torch_emu: backend package torch_emu" in text
    )
    assert "import_module('torch_cuda') loads backend package torch_cuda" in text
    assert "prof.py:5: core -> any module: __import__(a computed name) outside" in text
    assert "core -> cuda toolkit: CDLL('libnvidia-ml.so.1') loads a cuda vendor" in text
    assert "ctypes.cdll loads a library outside the allowlisted loaders" in text
    assert "imports pynvml: a cuda vendor module" in text
    assert "_backends.py" not in text  # the allowlisted loader, with a computed name


def test_python_processes_and_environment(tmp_path: Path) -> None:
    """Launching a vendor tool and reading a vendor variable: in core, in a backend whose
    toolkit it is not, never in the backend whose toolkit it is."""
    body = (
        "import os, shutil, subprocess\n"
        "from os import environ\n"
        "def probe():\n"
        '    subprocess.run(["nvidia-smi", "-L"], check=False)\n'
        '    os.system("rocm-smi --showuse")\n'
        '    shutil.which("nv" + "cc")\n'
        '    os.environ["NVIDIA_VISIBLE_DEVICES"]\n'
        '    os.environ.get("CUDA_" + "VISIBLE_DEVICES")\n'
        '    os.getenv("HIP_VISIBLE_DEVICES")\n'
        '    "ROCR_VISIBLE_DEVICES" in environ\n'
        '    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")\n'
        '    TOOL = "nvidia-smi"\n'
        '    os.environ.get("MASTER_ADDR")\n'
        '    subprocess.run(["gcc", "--version"])\n'
    )
    text = messages(
        tmp_path,
        {
            "core/torch_core/probe.py": body,
            "third_device/torch_emu/torch_emu/probe.py": body,
            "third_device/torch_cuda/torch_cuda/probe.py": body,
        },
    )
    core = [line for line in text.splitlines() if "core/torch_core/probe.py" in line]
    assert core == [
        "PYTHON [core-to-toolkit] core/torch_core/probe.py:4: core -> cuda toolkit: "
        "subprocess.run launches nvidia-smi, a cuda command-line tool",
        "PYTHON [core-to-toolkit] core/torch_core/probe.py:5: core -> rocm toolkit: "
        "os.system launches rocm-smi, a rocm command-line tool",
        "PYTHON [core-to-toolkit] core/torch_core/probe.py:6: core -> cuda toolkit: "
        "shutil.which launches nvcc, a cuda command-line tool",
        "PYTHON [core-to-toolkit] core/torch_core/probe.py:7: core -> cuda toolkit: "
        "NVIDIA_VISIBLE_DEVICES is a cuda environment variable (os.environ[...])",
        "PYTHON [core-to-toolkit] core/torch_core/probe.py:8: core -> cuda toolkit: "
        "CUDA_VISIBLE_DEVICES is a cuda environment variable (environ.get)",
        "PYTHON [core-to-toolkit] core/torch_core/probe.py:9: core -> rocm toolkit: "
        "HIP_VISIBLE_DEVICES is a rocm environment variable (os.getenv)",
        "PYTHON [core-to-toolkit] core/torch_core/probe.py:10: core -> rocm toolkit: "
        "ROCR_VISIBLE_DEVICES is a rocm environment variable (in os.environ)",
        "PYTHON [core-to-toolkit] core/torch_core/probe.py:11: core -> cuda toolkit: "
        "TORCH_CUDA_ARCH_LIST is a cuda environment variable (environ.setdefault)",
        "PYTHON [core-to-toolkit] core/torch_core/probe.py:12: core -> cuda toolkit: "
        "names nvidia-smi, a cuda command-line tool",
    ]
    emu = [line for line in text.splitlines() if "torch_emu/probe.py" in line]
    assert len(emu) == 9 and all("[TOOLKITS]" in line for line in emu), emu
    assert "torch_emu -> cuda toolkit (not its own): subprocess.run launches nvidia-smi" in text
    # torch_cuda's own toolkit is CUDA: only the ROCm names are couplings.
    cuda = [line for line in text.splitlines() if "torch_cuda/probe.py" in line]
    assert [line.split(": ", 2)[1] for line in cuda] == [
        "torch_cuda -> rocm toolkit (not its own)"
    ] * 3


def test_backend_python_imports_another_backend(tmp_path: Path) -> None:
    text = messages(
        tmp_path,
        {
            "third_device/torch_emu/torch_emu/distributed.py": "try:\n"
            "    import torch_cuda\nexcept ImportError:\n    pass\n"
            "import torch_core\nimport torch_emu.core\n"
            "def f():\n"
            '    __import__("torch_" + "cuda" + "._CUDAC")\n',
        },
    )
    assert text.splitlines() == [
        "PYTHON [backend-to-backend] third_device/torch_emu/torch_emu/distributed.py:2: "
        "torch_emu -> torch_cuda: imports torch_cuda: backend package torch_cuda",
        "PYTHON [backend-to-backend] third_device/torch_emu/torch_emu/distributed.py:8: "
        "torch_emu -> torch_cuda: __import__('torch_cuda._CUDAC') loads backend package "
        "torch_cuda",
    ]


def test_c_dlopen_split_literal_and_dotdot_include(tmp_path: Path) -> None:
    text = messages(
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
    assert "Probe.cpp:3: core -> any library: dlopen() outside the allowlisted loaders" in text
    assert (
        "Probe.cpp:3: core -> cuda toolkit: string 'libcudart.so.13' (in a dlopen() call) "
        "names a cuda vendor library" in text
    )
    assert (
        "INCLUDE [core-to-backend] core/c10/core/Probe.cpp:1: core -> torch_emu: "
        '"../../../third_device/torch_emu/csrc/framework/EmuDriver.h" resolves to '
        "third_device/torch_emu/csrc/framework/EmuDriver.h, outside //core" in text
    )
    assert "Ok.h" not in text and "KernelLibraries" not in text and ":4:" not in text


def test_c_couplings_between_every_pair(tmp_path: Path) -> None:
    text = messages(
        tmp_path,
        {
            "core/c10/core/Env.cpp": "#include <cstdlib>\n"
            'const char* a() { return std::getenv("NVIDIA_" "VISIBLE_DEVICES"); }\n'
            'int b() { return std::system("nvidia-smi -L"); }\n'
            'const char* kName = "HIP_VISIBLE_DEVICES";\n'
            'const char* c() { return std::getenv("TORCHSPLIT_JIT_CACHE"); }\n',
            "third_device/torch_cuda/csrc/framework/Borrow.cpp": "#include <dlfcn.h>\n"
            'void* e() { return dlopen("_EMUC" ".so", RTLD_LAZY); }\n'
            'const char* v() { return getenv("CUDA_VISIBLE_DEVICES"); }\n'
            'const char* h() { return getenv("HIP_VISIBLE_DEVICES"); }\n'
            '#include "../../../torch_emu/csrc/framework/EmuDriver.h"\n',
            "third_device/torch_emu/csrc/framework/Probe.cpp": "#include <cstdio>\n"
            'FILE* p() { return popen("/usr/bin/nvidia-smi -q", "r"); }\n'
            'void* l() { return dlopen("libtorch_cuda.so", 0); }\n',
        },
    )
    assert text.splitlines() == [
        "SOURCE [core-to-toolkit] core/c10/core/Env.cpp:2: core -> cuda toolkit: string "
        "'NVIDIA_VISIBLE_DEVICES' (in a getenv() call) is a cuda environment variable",
        "SOURCE [core-to-toolkit] core/c10/core/Env.cpp:3: core -> cuda toolkit: string "
        "'nvidia-smi -L' (in a system() call) runs nvidia-smi, a cuda command-line tool",
        "SOURCE [core-to-toolkit] core/c10/core/Env.cpp:4: core -> rocm toolkit: string "
        "'HIP_VISIBLE_DEVICES' is a rocm environment variable",
        "SOURCE [backend-to-backend] third_device/torch_cuda/csrc/framework/Borrow.cpp:2: "
        "torch_cuda -> torch_emu: string '_EMUC.so' (in a dlopen() call) names _EMUC, of "
        "backend torch_emu",
        "SOURCE [TOOLKITS] third_device/torch_cuda/csrc/framework/Borrow.cpp:4: torch_cuda -> "
        "rocm toolkit (not its own): string 'HIP_VISIBLE_DEVICES' (in a getenv() call) is a "
        "rocm environment variable",
        "INCLUDE [backend-to-backend] third_device/torch_cuda/csrc/framework/Borrow.cpp:5: "
        'torch_cuda -> torch_emu: "../../../torch_emu/csrc/framework/EmuDriver.h" resolves to '
        "third_device/torch_emu/csrc/framework/EmuDriver.h, outside //third_device/torch_cuda",
        "SOURCE [TOOLKITS] third_device/torch_emu/csrc/framework/Probe.cpp:2: torch_emu -> "
        "cuda toolkit (not its own): string '/usr/bin/nvidia-smi -q' (in a popen() call) runs "
        "nvidia-smi, a cuda command-line tool",
        "SOURCE [backend-to-backend] third_device/torch_emu/csrc/framework/Probe.cpp:3: "
        "torch_emu -> torch_cuda: string 'libtorch_cuda.so' (in a dlopen() call) names "
        "torch_cuda, of backend torch_cuda",
    ]


def test_build_files(tmp_path: Path) -> None:
    text = messages(
        tmp_path,
        {
            "core/BUILD.bazel": 'load("@rules_cuda//cuda:defs.bzl", "if_cuda")\n'
            'load("//tools:accel.bzl", "if_accel")\n'
            'load("//:lists.bzl", "SRCS")\n'
            'cc_library(name = "a", linkopts = ["-lcudart"], copts = ["-I/usr/local/cuda/include"],'
            ' deps = ["@cuda_wheels//:nvrtc_headers"] + if_accel([]), srcs = ["k.cu"] + SRCS)\n'
            'layer_graph_test(name = "t", layer = "core")\ncc_library(name = "late")\n',
            "lists.bzl": 'SRCS = ["core/probe.cuh"]\nSUFFIXES = [".cu"]\n',
            "tools/accel.bzl": "def if_accel(a):\n"
            '    return select({"@rules_cuda//cuda:is_enabled": a, "//conditions:default": []})\n',
            "third_device/torch_emu/BUILD.bazel": 'device_backend(name = "torch_emu", deps = '
            'select({":x": ["//third_device/torch_cuda:framework", "@local_cuda//:headers"]}), '
            'linkopts = ["-lamdhip64", "-lcudart"])\n'
            'alias(name = "p", actual = ":framework", visibility = ["//visibility:public"])\n',
            "third_device/torch_cuda/BUILD.bazel": 'device_backend(name = "torch_cuda", '
            'deps = ["@local_cuda//:headers"], linkopts = ["-lcudart"])\n',
        },
    )
    assert "core/BUILD.bazel:1: core -> @rules_cuda: @rules_cuda//cuda:defs.bzl is in" in text
    assert "linkopts has '-lcudart', a cuda library" in text
    assert "copts has '-I/usr/local/cuda/include'" in text
    assert "@cuda_wheels//:nvrtc_headers is in @cuda_wheels" in text
    assert "tools/accel.bzl:2: core -> @rules_cuda: @rules_cuda//cuda:is_enabled" in text
    assert "(loaded by core/BUILD.bazel)" in text
    assert "cc_library() after layer_graph_test()" in text
    assert (
        "BUILD [core-device-source] core/BUILD.bazel:4: core -> a device compiler: 'k.cu'" in text
    )
    assert (
        "BUILD [core-device-source] lists.bzl:1: core -> a device compiler: 'core/probe.cuh'"
        in text
    )
    assert "'.cu'" not in text  # a suffix, not a file
    assert (
        "BUILD [backend-to-backend] third_device/torch_emu/BUILD.bazel:1: torch_emu -> "
        "torch_cuda: //third_device/torch_cuda:framework is another backend's label" in text
    )
    assert "@local_cuda//:headers is in @local_cuda, which torch_emu may not reach" in text
    assert "torch_emu -> rocm toolkit (not its own): linkopts has '-lamdhip64'" in text
    assert "torch_emu -> cuda toolkit (not its own): linkopts has '-lcudart'" in text
    assert "a public target in a backend package" in text
    assert "alias() after device_backend()" in text
    assert "third_device/torch_cuda/BUILD.bazel" not in text  # its own toolkit


def test_derived_backend_may_name_its_parents_sources_only(tmp_path: Path) -> None:
    policy = load_policy(REPO / "tools" / "layering" / "policy.bzl")
    policy.derived = {"torch_hip": Derived("torch_cuda", ("hipify_sources",))}
    root = tree(
        tmp_path,
        {
            "third_device/torch_cuda/csrc/aten/Add.cu": "",
            "third_device/torch_hip/BUILD.bazel": "hipify_sources(name = 'k', srcs = "
            '["//third_device/torch_cuda:csrc/aten/Add.cu"])\n'
            "cc_library(name = 'l', deps = ['//third_device/torch_cuda:aten'], srcs = "
            '["//third_device/torch_cuda:_CUDAC.so"])\n',
        },
    )
    found = [f.render() for f in check_sources(root, policy, [*PACKAGES, "third_device/torch_hip"])]
    assert found == [
        "BUILD [backend-to-backend] third_device/torch_hip/BUILD.bazel:2: torch_hip -> "
        "torch_cuda: //third_device/torch_cuda:aten is another backend's label",
        "BUILD [backend-to-backend] third_device/torch_hip/BUILD.bazel:2: torch_hip -> "
        "torch_cuda: //third_device/torch_cuda:_CUDAC.so is another backend's label",
    ]


def test_effective_flags_of_compile_and_link_actions(tmp_path: Path) -> None:
    """What the actions receive, whoever computed it (aquery's view, not the BUILD file's)."""
    layers = Layers.of(tree(tmp_path, {}), POLICY, PACKAGES)
    gcc = "/usr/bin/gcc"
    actions = [
        Action(
            "CppLink", "//core:_C.so", (gcc, "-shared", "-lnvToolsExt", "-lm", "-ltorch_core"), ()
        ),
        Action("CppLink", "//core:tool", (gcc, "-lfoo", "-Wl,-rpath,/usr/local/cuda/lib64"), ()),
        Action("CppCompile", "//core:x", (gcc, "-DUSE_CUDA=1", "-D__DATE__=x", "-c", "a.cc"), ()),
        Action("CppCompile", "//third_device/torch_emu:x", (gcc, "-D", "__HIP_PLATFORM_AMD__"), ()),
        Action("CppCompile", "//third_device/torch_cuda:x", (gcc, "-DCUDA_WHEELS_HAVE_NCCL=1"), ()),
        Action("CppLink", "//third_device/torch_cuda:y", (gcc, "-l:_EMUC.so"), ()),
    ]
    found = [f.render() for f in check_flags(actions, layers, POLICY)]
    assert found == [
        "FLAGS [core-to-toolkit] //core:_C.so: core -> cuda toolkit: its CppLink action "
        "receives '-lnvToolsExt', a library or toolkit path of cuda",
        "FLAGS [CORE_NEEDED] //core:tool: core -> a library: its CppLink action receives "
        "'-lfoo': libfoo.so is not among the libraries core may link (CORE_NEEDED)",
        "FLAGS [core-to-toolkit] //core:tool: core -> cuda toolkit: its CppLink action receives "
        "'-Wl,-rpath,/usr/local/cuda/lib64', a library or toolkit path of cuda",
        "FLAGS [core-to-toolkit] //core:x: core -> cuda toolkit: its CppCompile action receives "
        "'-DUSE_CUDA=1', a define of cuda",
        "FLAGS [TOOLKITS] //third_device/torch_emu:x: torch_emu -> rocm toolkit (not its own): "
        "its CppCompile action receives '__HIP_PLATFORM_AMD__', a define of rocm",
        "FLAGS [backend-to-backend] //third_device/torch_cuda:y: torch_cuda -> torch_emu: its "
        "CppLink action receives '-l:_EMUC.so', naming _EMUC",
    ]


# -- the run-time guard --------------------------------------------------------------------
GUARD_SCRIPT = """
import os, subprocess, sys
sys.path[:0] = [{core!r}, {emu!r}, {cuda!r}]
from torch_core import prof
from torchsplit.audit.runtime import LayeringViolation
found = []
for fn in (prof.start, prof.nvml, prof.smi, prof.env, prof.own):
    try:
        fn()
    except LayeringViolation as exc:
        found.append(str(exc))
try:
    import torch_emu
except LayeringViolation as exc:
    found.append(str(exc))
import torch_cuda  # a test importing a backend: fine
os.environ.get("NVIDIA_VISIBLE_DEVICES")  # a test reading a vendor variable: fine
dict(os.environ)
print(len(found)); print(chr(10).join(found))
"""


def test_runtime_guard_every_layer(tmp_path: Path) -> None:
    """Core importing a backend, dlopening a vendor library, launching a vendor tool,
    reading a vendor variable; a backend importing another: each raises and is recorded,
    here and (TORCHSPLIT_LAYERING_LOG) in a process the guarded one starts. A test doing
    the same, a backend reading its own toolkit's variable, a copy of the environment: fine."""
    shutil.copytree(REPO / "tools" / "layering", tmp_path / "tools" / "layering")
    core = tmp_path / "core" / "torch_core"
    core.mkdir(parents=True)
    (core / "__init__.py").write_text("")
    (core / "prof.py").write_text(
        "import ctypes, importlib, os, subprocess, sys\n"
        "def start():\n    importlib.import_module('torch_' + 'cuda')\n"
        "def nvml():\n    try:\n        ctypes.CDLL('libnvidia-ml.so.1')\n"
        "    except OSError:\n        pass\n"
        "def smi():\n    subprocess.run(['nvidia-smi', '-L'], capture_output=True)\n"
        "def env():\n    return os.environ.get('CUDA_VISIBLE_DEVICES')\n"
        "def own():\n    return os.environ.get('TORCHSPLIT_JIT_CACHE'), dict(os.environ)\n"
    )
    for name, body in (
        ("torch_emu", "import os\nos.environ.get('TORCH_EMU_DEVICES')\nimport torch_cuda\n"),
        ("torch_cuda", "import os\nos.environ.setdefault('CUDA_MODULE_LOADING', 'EAGER')\n"),
    ):
        package = tmp_path / "third_device" / name / name
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(body)
    script = tmp_path / "main.py"
    script.write_text(
        GUARD_SCRIPT.format(
            core=str(tmp_path / "core"),
            emu=str(tmp_path / "third_device" / "torch_emu"),
            cuda=str(tmp_path / "third_device" / "torch_cuda"),
        )
    )
    log = tmp_path / "layering.log"
    env = {**os.environ, "TORCHSPLIT_LAYERING_GUARD": str(tmp_path),
           "TORCHSPLIT_LAYERING_LOG": str(log),
           "PYTHONPATH": str(REPO / "tools" / "python")}  # fmt: skip
    # The guard comes from the start-up hook (tools/dev bootstrap), as in a test's
    # subprocess; without the hook in this interpreter, from an explicit install.
    boot = "import sys, pathlib; from torchsplit.audit.runtime import install_for_checkout; "
    boot += f"install_for_checkout(pathlib.Path({str(tmp_path)!r})); "
    boot += f"exec(open({str(script)!r}).read())"
    out = subprocess.run(
        [sys.executable, "-c", boot], capture_output=True, text=True, check=True, env=env,
        cwd=tmp_path,
    ).stdout.splitlines()  # fmt: skip
    assert out[0] == "5", "\n".join(out)
    assert out[1].startswith("core/torch_core/prof.py:3 imports backend package torch_cuda "
                             "(core -> torch_cuda, rule core-to-backend")  # fmt: skip
    assert "prof.py:6 loads cuda vendor library libnvidia-ml.so.1 (core -> cuda toolkit" in out[2]
    assert "prof.py:10 launches (subprocess) nvidia-smi, a cuda command-line tool" in out[3]
    assert "prof.py:12 reads CUDA_VISIBLE_DEVICES, a cuda environment variable" in out[4]
    assert out[5].startswith(
        "third_device/torch_emu/torch_emu/__init__.py:3 imports backend package torch_cuda "
        "(torch_emu -> torch_cuda, rule backend-to-backend"
    )
    assert log.read_text().splitlines() == out[1:]


def test_runtime_guard_in_python_dev_mode(tmp_path: Path) -> None:
    """`python -X dev` inside a checkout installs the guard through the start-up hook that
    tools/dev bootstrap writes (torchsplit-layering.pth) -- when this interpreter has it."""
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    if not (site / "torchsplit-layering.pth").is_file():
        import pytest

        pytest.skip(f"no start-up hook in {site}: run tools/dev bootstrap")
    code = "import sys; print('Guard' in [type(h).__name__ for h in sys.meta_path])"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TORCHSPLIT_LAYERING")}
    for flags, wanted in ((["-X", "dev"], "True"), ([], "False")):
        out = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True,
                             text=True, check=False, cwd=REPO / "core", env=clean)  # fmt: skip
        assert out.stdout.strip() == wanted, out.stderr
