"""The layering mutation harness: inject one violation at a time, see which mechanism catches it.

One temporary copy of the checkout (a git repository, so each mutation is reverted with
checkout + clean) and one Bazel --output_base, so Bazel stays warm across mutations.
Each mechanism runs on its own, with the others off where they would stop it first
(the aspect is taken out of the copy's .bazelrc for every column but its own, and
visibility checking is off for every column but its own), so a catch is that
mechanism's alone:

  visibility      `bazel build --nobuild --keep_going //...`: "is not visible" errors
  aspect          the same with the aspect and --nocheck_visibility: the aspect's errors
  graph           the genquery expressions of every layering_graph_test (_deps, _public)
                  (what `bazel test` checks), evaluated by `bazel query`
  compile         `bazel build --keep_going` of core and the mutated backends: a compile
                  or link error in the sandbox
  audit-graph     `torchsplit audit`'s graph queries (somepath/cquery paths, each layer's
                  repositories, visible() leaks, core's device sources)
  audit-source    the audit's source checks (Python, C/C++, includes, the include scan)
  audit-BUILD     the audit's BUILD-file check (literal labels and flags) and effective-
                  flags check (the compile and link actions' arguments, from aquery)
  audit-artifact  the audit's ELF check of the link outputs `compile` rebuilt
  runtime         the pytest sessions of the mutated layers (tests/core, tests/<backend>)
                  with the run-time guard, when a layer's Python changed

A mechanism catches a mutation when it reports it with the expected message.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from torchsplit.audit import actions as action_graph
from torchsplit.audit import cases
from torchsplit.audit.auditor import Auditor, AuditResult
from torchsplit.audit.cases import append as _append
from torchsplit.audit.cases import edit as _edit
from torchsplit.audit.policy import DEFAULT_POLICY, load_policy
from torchsplit.bazel_run import Bazel, default_bazel, error_lines
from torchsplit.checkout import copy_checkout, revert, snapshot
from torchsplit.errors import TorchsplitError

LAYERS = (
    "visibility",
    "aspect",
    "graph",
    "compile",
    "audit-graph",
    "audit-source",
    "audit-BUILD",
    "audit-artifact",
    "runtime",
)
# Finding kinds (findings.py) -> the column that reports them.
_FINDING_COLUMNS = {
    "GRAPH": "audit-graph",
    "PYTHON": "audit-source",
    "SOURCE": "audit-source",
    "INCLUDE": "audit-source",
    "BUILD": "audit-BUILD",
    "FLAGS": "audit-BUILD",
    "ARTIFACT": "audit-artifact",
}
_ASPECT_LINE = "build --aspects=//tools/layering:check.bzl%layering_check\n"

# The checkout this package lives in (tools/python/torchsplit/): its
# node_modules has buildozer; the mutated copy has none.
REPO_ROOT = Path(__file__).resolve().parents[4]

_EXTENSION_DEPS = '    deps = [":torch_cpu_api"],\n'

# A second backend for the harness when the checkout has only one.
STANDIN_BACKEND = """# Stand-in second backend, made by the layering mutation harness.
load("@rules_cc//cc:defs.bzl", "cc_library")
load("//tools/layering:rules.bzl", "backend_visibility")

cc_library(
    name = "framework",
    visibility = backend_visibility("torch_emu"),
    deps = ["//core:torch_cpu_api"],
)
"""


def _extension_dep(label: str) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        _edit(
            root,
            "core/BUILD.bazel",
            _EXTENSION_DEPS,
            f'    deps = [":torch_cpu_api", "{label}"],\n',
        )

    return apply


def _public_intermediate(root: Path) -> None:
    _append(
        root,
        "tests/BUILD.bazel",
        '\ncc_library(\n    name = "bridge",\n    visibility = ["//visibility:public"],\n'
        '    deps = ["//third_device/torch_cuda:aten"],\n)\n',
    )
    _extension_dep("//tests:bridge")(root)


def _select_branch(root: Path) -> None:
    _edit(
        root,
        "core/BUILD.bazel",
        _EXTENSION_DEPS,
        '    deps = [":torch_cpu_api"] + select({\n'
        '        "@rules_cuda//cuda:is_enabled": ["//third_device/torch_cuda:aten"],\n'
        '        "//conditions:default": [],\n'
        "    }),\n",
    )


def _buildozer(root: Path, command: str, target: str) -> None:
    """Edits a BUILD file the way a developer would, whatever its formatting."""
    buildozer = REPO_ROOT / "node_modules" / ".bin" / "buildozer"
    if not buildozer.exists():
        raise TorchsplitError("buildozer is missing: run tools/dev bootstrap", str(buildozer))
    proc = subprocess.run(
        [str(buildozer), command, target], cwd=root, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:  # 3 would mean "nothing changed": the mutation did not apply
        raise TorchsplitError(
            f"buildozer {command!r} {target} failed ({proc.returncode}): {proc.stderr}"
        )


def _data_dep(root: Path) -> None:
    _buildozer(root, "add data //third_device/torch_cuda:_CUDAC", "//core:torch_core")


def _include(rel: str, after: str, line: str) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        _edit(root, rel, after, after + line + "\n")

    return apply


def _emu_to_cuda(root: Path) -> None:
    _append(
        root,
        "third_device/torch_emu/BUILD.bazel",
        '\ncc_library(\n    name = "borrowed_stream",\n'
        '    deps = ["//third_device/torch_cuda:framework"],\n)\n',
    )


def _widened(root: Path) -> None:
    _edit(
        root,
        "tools/build_defs/backend.bzl",
        "    visibility = backend_visibility(name)\n",
        '    visibility = ["//visibility:public"]\n',
    )
    _extension_dep("//third_device/torch_cuda:framework")(root)


@dataclass(frozen=True)
class Mutation:
    name: str
    description: str
    apply: Callable[[Path], None]
    # layer -> substrings its report must contain (the layers expected to catch it)
    expect: dict[str, tuple[str, ...]]
    build_flags: tuple[str, ...] = ()
    cquery_flags: tuple[str, ...] = ()
    # Substrings no mechanism may report (what the mutation does that is allowed).
    absent: tuple[str, ...] = ()
    # Why only one mechanism can catch it (docs/layering.md); empty: two must.
    single: str = ""


_EXT = "//core:torch_core/_C.so"
_EMU = "//third_device/torch_emu:borrowed_stream"
_CUDA_FW = "//third_device/torch_cuda:framework"
MUTATIONS: tuple[Mutation, ...] = (
    Mutation(
        "direct-deps",
        "core's extension lists //third_device/torch_cuda:aten in deps",
        _extension_dep("//third_device/torch_cuda:aten"),
        {
            "visibility": (
                f"target '//third_device/torch_cuda:aten' is not visible from target '{_EXT}'",
            ),
            "aspect": (f"{_EXT} cannot depend on //third_device/torch_cuda:aten", "somepath("),
            "audit-graph": (
                f"{_EXT} cannot depend on //third_device/torch_cuda:aten",
                "via deps of",
            ),
        },
    ),
    Mutation(
        "public-intermediate",
        "core depends on a public //tests:bridge that depends on torch_cuda:aten",
        _public_intermediate,
        {
            "aspect": (f"{_EXT} cannot depend on //third_device/torch_cuda:aten",),
            "audit-graph": ("-> //tests:bridge", "-> //third_device/torch_cuda:aten"),
        },
    ),
    Mutation(
        "select-branch",
        "torch_cuda:aten only in a select() branch on @rules_cuda//cuda:is_enabled "
        "(--config=cuda); audited with cquery under --config=cpu-only",
        _select_branch,
        {
            "visibility": (f"is not visible from target '{_EXT}'",),
            "aspect": (f"{_EXT} cannot depend on //third_device/torch_cuda:aten",),
            "audit-graph": (
                f"{_EXT} cannot depend on //third_device/torch_cuda:aten",
                "inactive select() branch",
            ),
        },
        build_flags=("--config=cuda",),
        cquery_flags=("--config=cpu-only",),
    ),
    Mutation(
        "data-dep",
        "core's py_library lists //third_device/torch_cuda:_CUDAC in data",
        _data_dep,
        {
            "visibility": (
                "//third_device/torch_cuda:_CUDAC",
                "is not visible from target '//core:torch_core'",
            ),
            "aspect": ("//core:torch_core cannot depend on //third_device/torch_cuda:",),
            "audit-graph": (
                "//core:torch_core cannot depend on //third_device/torch_cuda:_CUDAC",
                "via data of",
            ),
        },
    ),
    Mutation(
        "core-header-includes-backend",
        'core/c10/core/Device.h includes "torch_cuda/csrc/framework/CUDAHooks.h"',
        _include(
            "core/c10/core/Device.h",
            "#pragma once\n",
            '#include "torch_cuda/csrc/framework/CUDAHooks.h"',
        ),
        {
            "audit-source": (
                "core/c10/core/Device.h",
                "third_device/torch_cuda/csrc/framework/CUDAHooks.h",
            ),
            "compile": ("torch_cuda/csrc/framework/CUDAHooks.h",),
        },
    ),
    Mutation(
        "core-source-includes-cuda-runtime",
        "core/c10/core/Device.cpp includes <cuda_runtime.h>",
        _include(
            "core/c10/core/Device.cpp",
            '#include "c10/core/Device.h"\n',
            "#include <cuda_runtime.h>",
        ),
        {
            "audit-source": ("core/c10/core/Device.cpp", "cuda_runtime.h"),
            "compile": ("cuda_runtime.h",),
        },
    ),
    Mutation(
        "core-to-toolkit",
        "core's extension lists @local_cuda//:headers in deps",
        _extension_dep("@local_cuda//:headers"),
        {
            "visibility": (f"target '@local_cuda//:headers' is not visible from target '{_EXT}'",),
            "aspect": (f"{_EXT} cannot depend on @local_cuda//:headers",),
            "audit-graph": (f"{_EXT} cannot depend on @local_cuda//:headers",),
        },
    ),
    Mutation(
        "emu-to-cuda",
        "a torch_emu target depends on //third_device/torch_cuda:framework",
        _emu_to_cuda,
        {
            "visibility": (f"target '{_CUDA_FW}' is not visible from target '{_EMU}'",),
            "aspect": (
                f"{_EMU} cannot depend on {_CUDA_FW}",
                "backend-to-backend",
            ),
            "audit-graph": (f"{_EMU} cannot depend on {_CUDA_FW}",),
        },
    ),
    Mutation(
        "visibility-widened",
        "device_backend's visibility widened to public; core then depends on torch_cuda:framework",
        _widened,
        {
            "aspect": (f"{_EXT} cannot depend on //third_device/torch_cuda:framework",),
            "audit-graph": (
                f"VISIBILITY [core-to-backend] {_CUDA_FW} is visible to //core",
                f"{_EXT} cannot depend on //third_device/torch_cuda:framework",
            ),
        },
    ),
    # -- couplings that need no build edge (issue 12) -----------------------------------
    Mutation(
        "dlopen-split-literal",
        'core/c10/core/Device.cpp: dlopen("libcu" "dart.so.13") (name split across literals)',
        cases.dlopen_split_literal,
        {
            "audit-source": ("dlopen() outside the allowlisted loaders", "'libcudart.so.13'"),
            "audit-artifact": ("libtorch_core.so", "'libcudart.so.13'"),
        },
    ),
    Mutation(
        "python-import-backend",
        "core profiler: `import torch_emu` in a function; "
        'importlib.import_module("torch_" + "cu" + "da")',
        cases.python_import_backend,
        {
            "audit-source": (
                "imports torch_emu",
                "import_module('torch_cuda') loads backend package",
            ),
            "runtime": ("imports backend package torch_cuda",),
        },
    ),
    Mutation(
        "python-ctypes-nvml",
        'core profiler: ctypes.CDLL("libnvidia-ml.so.1")',
        cases.python_ctypes_nvml,
        {
            "audit-source": ("CDLL('libnvidia-ml.so.1')",),
            "runtime": ("loads cuda vendor library libnvidia-ml.so.1",),
        },
    ),
    Mutation(
        "second-toolkit-repository",
        "core links libcudart from a second repository, @nv_runtime (not @local_cuda)",
        cases.second_toolkit_repository,
        {
            "aspect": (f"{_EXT} cannot depend on @nv_runtime//:cudart",),
            "graph": ("@nv_runtime//:cudart",),
            "audit-graph": ("@nv_runtime is not among the repositories core may reach",),
            "audit-BUILD": ("@nv_runtime//:cudart",),
        },
    ),
    Mutation(
        "wrapped-select-rules-cuda",
        "core selects on @rules_cuda//cuda:is_enabled through a neutral //tools macro",
        cases.wrapped_select,
        {
            "graph": ("@rules_cuda//cuda:is_enabled",),
            "audit-graph": ("@rules_cuda//cuda:is_enabled",),
            "audit-BUILD": ("@rules_cuda//cuda:is_enabled", "loaded by core/BUILD.bazel"),
        },
    ),
    Mutation(
        "core-to-nvrtc-headers",
        "core's extension lists @cuda_wheels//:nvrtc_headers in deps",
        _extension_dep("@cuda_wheels//:nvrtc_headers"),
        {
            "visibility": ("is not visible from target",),
            "aspect": (f"{_EXT} cannot depend on @cuda_wheels//:nvrtc_headers",),
            "graph": ("@cuda_wheels//:nvrtc_headers",),
            "audit-graph": ("@cuda_wheels//:nvrtc_headers",),
            "audit-BUILD": ("@cuda_wheels//:nvrtc_headers",),
        },
    ),
    Mutation(
        "core-include-dotdot",
        "core/c10/core/Device.cpp includes "
        '"../../../third_device/torch_emu/csrc/framework/EmuDriver.h"',
        cases.include_dotdot,
        {
            "audit-source": ("resolves to third_device/torch_emu/csrc/framework/EmuDriver.h",),
            "compile": ("EmuDriver.h",),
        },
    ),
    Mutation(
        "emu-to-cuda-inactive-select",
        "torch_emu:framework depends on torch_cuda:framework in a select() branch no build takes",
        cases.emu_inactive_select,
        {
            "graph": ("//third_device/torch_cuda:framework",),
            "audit-graph": ("//third_device/torch_cuda:framework", "inactive select() branch"),
            "audit-BUILD": ("//third_device/torch_cuda:framework is another backend's label",),
        },
    ),
    Mutation(
        "public-alias-emu",
        "a public alias of //third_device/torch_emu:framework, no edge to it yet",
        cases.public_alias,
        {
            "audit-graph": ("VISIBILITY [core-to-backend] //third_device/torch_emu:emu_framework",),
            "audit-BUILD": (
                "a public target in a backend package",
                "alias() after device_backend()",
            ),
        },
    ),
    Mutation(
        "core-linkopts-cudart",
        'a core cc_library with linkopts = ["-lcudart"], linked into _C.so',
        cases.linkopts_cudart,
        {
            "audit-BUILD": ("linkopts has '-lcudart'",),
            "compile": ("cudart",),
        },
    ),
    Mutation(
        "core-genrule-tools-nvcc",
        'a core genrule with tools = ["@local_cuda//:nvcc"] (an exec-configuration edge)',
        cases.genrule_tools,
        {
            "visibility": ("is not visible from target '//core:device_version'",),
            "aspect": ("//core:device_version cannot depend on @local_cuda//:nvcc",),
            "audit-graph": ("@local_cuda//:nvcc",),
            "audit-BUILD": ("@local_cuda//:nvcc",),
        },
    ),
    # -- every pair of layers, processes and environment, effective flags, device sources,
    # derived backends (issue 24) -------------------------------------------------------
    Mutation(
        "core-python-runs-nvidia-smi",
        'core profiler: subprocess.run(["nvidia-smi", "-L"]) (a process coupling, no import)',
        cases.core_python_runs_nvidia_smi,
        {
            "audit-source": (
                "PYTHON [core-to-toolkit] core/torch_core/profiler/_profile.py:",
                "core -> cuda toolkit: subprocess.run launches nvidia-smi",
            ),
            "runtime": (
                "core/torch_core/profiler/_profile.py:",
                "launches (subprocess) nvidia-smi, a cuda command-line tool",
                "core -> cuda toolkit, rule core-to-toolkit",
            ),
        },
    ),
    Mutation(
        "emu-python-imports-cuda",
        "torch_emu's distributed package imports torch_cuda (in a try/except ImportError)",
        cases.emu_python_imports_cuda,
        {
            "audit-source": (
                "PYTHON [backend-to-backend] third_device/torch_emu/torch_emu/distributed/",
                "torch_emu -> torch_cuda: imports torch_cuda",
            ),
            "runtime": (
                "third_device/torch_emu/torch_emu/distributed/__init__.py:",
                "imports backend package torch_cuda",
                "(torch_emu -> torch_cuda, rule backend-to-backend",
            ),
        },
    ),
    Mutation(
        "cuda-cpp-dlopens-emu",
        "torch_cuda's C++: dlopen(\"_EMUC.so\") (torch_emu's extension)",
        cases.cuda_cpp_dlopens_emu,
        {
            "audit-source": (
                "SOURCE [backend-to-backend] third_device/torch_cuda/csrc/framework/"
                "DynamicLibrary.cpp:",
                "torch_cuda -> torch_emu: string '_EMUC.so' (in a dlopen() call) names _EMUC",
            ),
            "audit-artifact": (
                "ARTIFACT [backend-to-backend]",
                "_CUDAC.so: torch_cuda -> torch_emu: .rodata names _EMUC",
            ),
        },
    ),
    Mutation(
        "core-cpp-reads-nvidia-env",
        'core/c10/core/Device.cpp: std::getenv("NVIDIA_VISIBLE_DEVICES")',
        cases.core_cpp_reads_nvidia_env,
        {
            "audit-source": (
                "SOURCE [core-to-toolkit] core/c10/core/Device.cpp:",
                "core -> cuda toolkit: string 'NVIDIA_VISIBLE_DEVICES' (in a getenv() call)",
            ),
            "audit-artifact": (
                "libtorch_core.so: core -> cuda toolkit: .rodata names a cuda environment "
                "variable: 'NVIDIA_VISIBLE_DEVICES'",
            ),
        },
    ),
    Mutation(
        "core-linkopts-via-macro",
        "a neutral //tools macro returns -lnvToolsExt (spelled in pieces) into core's linkopts",
        cases.linkopts_via_macro,
        {
            "aspect": (
                f"{_EXT}: its link receives -lnvToolsExt (from the linkopts of {_EXT})",
                "CORE_NEEDED",
            ),
            "audit-BUILD": (
                f"FLAGS [core-to-toolkit] {_EXT}: core -> cuda toolkit: its CppLink action "
                "receives '-lnvToolsExt'",
            ),
        },
    ),
    Mutation(
        "core-cu-source",
        "core/c10/core/DeviceProbe.cu listed in build_variables.bzl's c10_sources "
        "(torch_cpu's srcs)",
        cases.core_cu_source,
        {
            "aspect": ("lists core/c10/core/DeviceProbe.cu in srcs: a device source",),
            "audit-graph": (
                "GRAPH [core-device-source] //core:torch_cpu",
                "//core:c10/core/DeviceProbe.cu",
            ),
            "audit-source": ("SOURCE [core-device-source] core/c10/core/DeviceProbe.cu",),
            "audit-BUILD": (
                "BUILD [core-device-source] build_variables.bzl:",
                "'core/c10/core/DeviceProbe.cu' is a device source",
            ),
        },
    ),
    Mutation(
        "emu-to-cuda-toolkit",
        "torch_emu's headers depend on @local_cuda//:headers (a toolkit that is not its own)",
        cases.emu_to_cuda_toolkit,
        {
            "visibility": (
                "target '@local_cuda//:headers' is not visible from target "
                "'//third_device/torch_emu:headers'",
            ),
            "aspect": ("//third_device/torch_emu:headers cannot depend on @local_cuda//:headers",),
            "graph": ("@local_cuda//:headers",),
            "audit-graph": (
                "@local_cuda is not among the repositories backend torch_emu may reach",
            ),
            "audit-BUILD": (
                "@local_cuda//:headers is in @local_cuda, which torch_emu may not reach",
            ),
        },
    ),
    Mutation(
        "derived-backend",
        "torch_dx, derived from torch_emu (DERIVED_BACKENDS, via genrule): its genrule reads a "
        "torch_emu source (allowed); its :framework depends on torch_emu:framework (not)",
        cases.derived_backend,
        {
            "visibility": (
                "target '//third_device/torch_emu:framework' is not visible from target "
                "'//third_device/torch_dx:framework'",
            ),
            "aspect": (
                "//third_device/torch_dx:framework cannot depend on "
                "//third_device/torch_emu:framework",
            ),
            "graph": (
                "//third_device/torch_dx:layering_graph_test_deps: "
                "//third_device/torch_emu:framework",
            ),
            "audit-graph": (
                "//third_device/torch_dx:framework cannot depend on "
                "//third_device/torch_emu:framework",
            ),
            "audit-BUILD": ("//third_device/torch_emu:framework is another backend's label",),
        },
        absent=("torch_dx:translated", "EmuDriver.cpp"),
    ),
)


@dataclass
class LayerResult:
    caught: bool
    evidence: str
    message_ok: bool = True


@dataclass
class MutationResult:
    mutation: Mutation
    layers: dict[str, LayerResult] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def caught_by(self) -> list[str]:
        return [name for name in LAYERS if self.layers[name].caught]

    def first_line(self, layer: str) -> str:
        """The first line a mechanism printed for this mutation (for the matrix)."""
        evidence = self.layers[layer].evidence.strip()
        return evidence.splitlines()[0] if evidence else ""

    @property
    def problems(self) -> list[str]:
        out = []
        for layer, wanted in self.mutation.expect.items():
            got = self.layers[layer]
            if not got.caught:
                out.append(f"{self.mutation.name}: layer {layer} did not catch it")
            missing = [w for w in wanted if w not in got.evidence]
            if missing:
                out.append(f"{self.mutation.name}: layer {layer} lacks {missing}:\n{got.evidence}")
        for text in self.mutation.absent:
            for layer, got in self.layers.items():
                if text in got.evidence:
                    out.append(
                        f"{self.mutation.name}: layer {layer} reports {text!r}, which is allowed:"
                        f"\n{got.evidence}"
                    )
        if len(self.caught_by) < 2 and not self.mutation.single:
            out.append(f"{self.mutation.name}: caught by {self.caught_by} only (< 2 mechanisms)")
        return out


_VIS = re.compile(r"is not visible from target|violates visibility")
_COMPILE = re.compile(
    r"fatal error:|undeclared inclusion|No such file or directory|cannot find -l|"
    r"linker input file unused|: error: "
)
_RUNTIME = re.compile(r"LAYERING RUNTIME: ")
_GUARD_ENV = ("TORCHSPLIT_LAYERING_GUARD", "TORCHSPLIT_LAYERING_LOG")


def _errors(stderr: str, pattern: re.Pattern[str], context: int = 0) -> str:
    lines = stderr.splitlines()
    keep: list[str] = []
    for i, line in enumerate(lines):
        if pattern.search(line):
            keep.extend(lines[i : i + 1 + context])
    return "\n".join(dict.fromkeys(keep))


def _column(result: AuditResult, column: str) -> LayerResult:
    """One audit column: its findings (by kind) and, for audit-graph and audit-source, the
    graph violations and the include scan."""
    part = AuditResult(result.policy)
    part.findings = [f for f in result.findings if _FINDING_COLUMNS.get(f.kind) == column]
    if column == "audit-graph":
        part.violations = result.violations
        part.visibility = result.visibility
        part.repositories = result.repositories
    if column == "audit-source":
        part.headers = result.headers
    return LayerResult(not part.ok, part.render() if not part.ok else "")


class Harness:
    def __init__(self, source: Path, work: Path, bazel: str | None = None) -> None:
        self.source = source
        self.root = work / "checkout"
        self.output_base = work / "output_base"
        copy_checkout(source, self.root)
        # The checkout's own settings (e.g. a shared disk cache); untracked, so copied by hand.
        if (source / "user.bazelrc").is_file():
            shutil.copyfile(source / "user.bazelrc", self.root / "user.bazelrc")
        if not (self.root / "third_device" / "torch_emu" / "BUILD.bazel").exists():
            (self.root / "third_device" / "torch_emu").mkdir(parents=True, exist_ok=True)
            (self.root / "third_device" / "torch_emu" / "BUILD.bazel").write_text(STANDIN_BACKEND)
        snapshot(self.root)
        self.bazelrc = (self.root / ".bazelrc").read_text()
        if _ASPECT_LINE not in self.bazelrc:
            raise TorchsplitError("the layering aspect is not attached in .bazelrc", ".bazelrc")
        self.bazel = Bazel(
            workspace=self.root,
            command=[bazel or default_bazel(self.root)],
            startup=[f"--output_base={self.output_base}"],
        )
        self.policy = load_policy(self.root / DEFAULT_POLICY)
        self.policy.path = DEFAULT_POLICY

    def _aspect(self, on: bool) -> None:
        """Attach the aspect (the checkout's .bazelrc) or not: every column but the aspect's
        runs without it, so what the aspect would stop first still reaches that mechanism.
        (A .bazelrc edit is a flag change: the server and its caches stay.)"""
        text = self.bazelrc if on else self.bazelrc.replace(_ASPECT_LINE, "")
        (self.root / ".bazelrc").write_text(text)

    def baseline(self) -> AuditResult:
        """The unmutated copy must build (core) and audit clean; this also warms Bazel up."""
        self._aspect(True)
        # What the runtime layer's sessions (tests/core, tests/torch_emu) load, no CUDA kernel.
        self.bazel.run(
            "build",
            "//core/...",
            "//third_device/torch_emu/...",
            "//tests:backends/_fake_device.so",
            "//tests:backends/_faulty_device.so",
        )
        result = Auditor(self.policy, self.bazel, []).run()
        if not result.ok:
            raise TorchsplitError(
                "the unmutated checkout does not audit clean:\n" + result.render()
            )
        return result

    def _graph(self) -> LayerResult:
        """The genquery expressions of the graph tests, run as `bazel query`: what
        `bazel test //...` checks, without the aspect stopping the analysis first."""
        proc = self.bazel.run("query", "kind(genquery, //...)", "--output=xml", check=False)
        if proc.returncode != 0 or not proc.stdout.strip():
            return LayerResult(False, error_lines(proc.stderr))
        lines: list[str] = []
        for rule in ET.fromstring(proc.stdout).iter("rule"):
            for attr in rule.iter("string"):
                if attr.get("name") == "expression":
                    got = self.bazel.run("query", attr.get("value", ""), check=False)
                    name = rule.get("name", "")
                    lines += [f"{name}: {x}" for x in got.stdout.splitlines() if x.strip()]
        return LayerResult(bool(lines), "\n".join(lines[:40]))

    def _changed(self) -> list[str]:
        """The files this mutation changed or added (workspace-relative)."""
        out = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"],
            cwd=self.root, capture_output=True, text=True, check=False,
        ).stdout  # fmt: skip
        return [line[3:].strip() for line in out.splitlines() if line.strip()]

    def _backends_changed(self) -> list[str]:
        return sorted(
            {
                path.split("/")[1]
                for path in self._changed()
                if path.startswith("third_device/") and path.count("/") >= 2
            }
        )

    def _runtime(self) -> LayerResult:
        """The test sessions of the layers whose Python the mutation changed, with the
        run-time guard (it watches imports, loads, processes and the environment)."""
        changed = [p for p in self._changed() if p.endswith(".py")]
        suites = ["tests/core"] if any(p.startswith("core/") for p in changed) else []
        for backend in self._backends_changed():
            if any(p.startswith(f"third_device/{backend}/") for p in changed):
                if (self.root / "tests" / backend).is_dir():
                    suites.append(f"tests/{backend}")
        if not suites:
            return LayerResult(False, "")
        env = {k: v for k, v in os.environ.items() if k not in _GUARD_ENV}
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", *suites, "-q", "-p", "no:cacheprovider"],
            cwd=self.root,
            capture_output=True,
            text=True,
            check=False,
            env={**env, "PYTHONDONTWRITEBYTECODE": "1"},
            timeout=900,
        )
        text = _errors(proc.stdout + proc.stderr, _RUNTIME)
        return LayerResult(proc.returncode != 0 and bool(text), text)

    def run(self, mutation: Mutation) -> MutationResult:
        start = time.monotonic()
        revert(self.root)
        mutation.apply(self.root)
        try:
            # The mutation may edit the policy itself (a derived backend).
            self.policy = load_policy(self.root / DEFAULT_POLICY)
            self.policy.path = DEFAULT_POLICY
            out = MutationResult(mutation)
            flags = list(mutation.build_flags)
            self._aspect(False)
            vis = self.bazel.run("build", "--nobuild", "--keep_going", *flags, "//...", check=False)
            text = _errors(vis.stderr, _VIS)
            out.layers["visibility"] = LayerResult(vis.returncode != 0 and bool(text), text)
            self._aspect(True)
            asp = self.bazel.run(
                "build", "--nobuild", "--keep_going", "--nocheck_visibility", *flags, "//...",
                check=False,
            )  # fmt: skip
            text = _errors(asp.stderr, re.compile(r"Error in fail: |  also: |^  \.\.\. "))
            out.layers["aspect"] = LayerResult(
                asp.returncode != 0 and "layering policy rule" in text, text
            )
            self._aspect(False)
            out.layers["graph"] = self._graph()
            auditor = Auditor(self.policy, self.bazel, list(mutation.cquery_flags), artifacts=False)
            audit = auditor.run()
            for column in ("audit-graph", "audit-source", "audit-BUILD"):
                out.layers[column] = _column(audit, column)
            wall = time.time()
            targets = ["//core/...", *(f"//third_device/{b}/..." for b in self._backends_changed())]
            comp = self.bazel.run(
                "build", "--keep_going", "--nocheck_visibility", *flags, *targets, check=False
            )
            text = _errors(comp.stderr, _COMPILE)
            out.layers["compile"] = LayerResult(comp.returncode != 0 and bool(text), text)
            out.layers["audit-artifact"] = _column(
                auditor.artifact_findings(newer_than=wall), "audit-artifact"
            )
            out.layers["runtime"] = self._runtime()
            for layer, wanted in mutation.expect.items():
                out.layers[layer].message_ok = all(w in out.layers[layer].evidence for w in wanted)
        finally:
            revert(self.root)
        out.seconds = time.monotonic() - start
        return out

    def close(self) -> None:
        self._aspect(True)
        self.bazel.run("shutdown", check=False)


def run_all(
    source: Path,
    mutations: tuple[Mutation, ...] = MUTATIONS,
    bazel: str | None = None,
    log: Callable[[str], None] | None = None,
    stale: bool = False,
) -> tuple[list[MutationResult], StaleReport | None]:
    """Every mutation in one warm harness; then, with ``stale``, the stale-artifact case."""
    with tempfile.TemporaryDirectory(prefix="torchsplit-mutations-") as tmp:
        harness = Harness(source, Path(tmp), bazel)
        try:
            harness.baseline()
            results = []
            for mutation in mutations:
                result = harness.run(mutation)
                if log:
                    log(f"{mutation.name}: caught by {', '.join(result.caught_by) or 'nothing'} "
                        f"({result.seconds:.1f}s)")  # fmt: skip
                results.append(result)
            report = stale_artifacts(harness) if stale else None
            if report is not None and log:
                log(report.render())
            return results, report
        finally:
            harness.close()


def render_matrix(results: list[MutationResult]) -> str:
    """Markdown table: one row per mutation, one column per mechanism."""
    header = ["violation", *LAYERS, "mechanisms"]
    rows = [header, ["---"] * len(header)]
    for r in results:
        cells = []
        for layer in LAYERS:
            got = r.layers[layer]
            mark = "caught" if got.caught else "-"
            if layer in r.mutation.expect and not (got.caught and got.message_ok):
                mark += " (EXPECTED)"
            cells.append(mark)
        rows.append([r.mutation.name, *cells, str(len(r.caught_by))])
    return "\n".join("| " + " | ".join(row) + " |" for row in rows) + "\n"


def render_first_lines(results: list[MutationResult]) -> str:
    """For each mutation, the first line each mechanism that caught it printed."""
    out = []
    for r in results:
        out.append(f"{r.mutation.name}: {r.mutation.description}")
        for layer in r.caught_by:
            out.append(f"  {layer}: {r.first_line(layer)}")
        if r.mutation.single:
            out.append(f"  (one mechanism only: {r.mutation.single})")
    return "\n".join(out) + "\n"


# -- artifacts of this build only -----------------------------------------------------------
_SHIM = "core/c10/core/AccelShim.cpp"


@dataclass
class StaleReport:
    """The stale-artifact case: a library built, its target removed, core rebuilt."""

    before: list[str]  # ARTIFACT findings after the first build
    after: list[str]  # ARTIFACT findings after the removal and the rebuild
    stale: list[str]  # ELF files left under bazel-bin/core that no action produces now
    read_after: int

    @property
    def problems(self) -> list[str]:
        out = []
        if not any("libaccel_probe.so" in f for f in self.before):
            out.append(f"stale-artifacts: the first build's shim was not flagged: {self.before}")
        if not self.stale:
            out.append("stale-artifacts: the removed library is not left under bazel-bin")
        if self.after:
            out.append(f"stale-artifacts: findings after the rebuild: {self.after}")
        return out

    def render(self) -> str:
        lines = ["stale-artifacts: built //core:libaccel_probe.so, and _C.so with the shim:"]
        lines += [f"  {x}" for x in self.before]
        lines.append("removed the shim and its dependency, rebuilt //core/... //third_device/...:")
        lines += [f"  left under bazel-bin, produced by no action now: {x}" for x in self.stale]
        lines.append(
            f"  the audit read {self.read_after} artifact(s) of this build; findings: "
            + ("; ".join(self.after) if self.after else "none")
        )
        return "\n".join(lines) + "\n"


def stale_artifacts(harness: Harness) -> StaleReport:
    """Build a core library naming the CUDA runtime (and link it into _C.so), remove it and
    the dependency, rebuild: the left-over library must not be read (issue 24, point 5)."""
    root = harness.root
    revert(root)
    harness._aspect(True)
    (root / _SHIM).write_text(
        "// Probes for an accelerator runtime (the stale-artifact case).\n"
        'extern "C" const char* accel_runtime_name() { return "libcu" "dart.so.13"; }\n'
    )
    _append(
        root,
        "core/BUILD.bazel",
        '\ncc_library(\n    name = "accel_shim",\n    srcs = ["c10/core/AccelShim.cpp"],\n'
        "    alwayslink = True,\n)\n\n"
        'cc_binary(\n    name = "libaccel_probe.so",\n    srcs = ["c10/core/AccelShim.cpp"],\n'
        "    linkshared = True,\n)\n",
    )
    _edit(root, "core/BUILD.bazel", _EXTENSION_DEPS,
          '    deps = [":accel_shim", ":torch_cpu_api"],\n')  # fmt: skip
    try:
        harness.bazel.run("build", "//core/...")
        auditor = Auditor(harness.policy, harness.bazel, [], headers=False, sources=False)
        before = [f.render() for f in auditor.run().findings if f.kind == "ARTIFACT"]
    finally:
        revert(root)
    # Everything the audit reads, rebuilt: the mutations before this case left backends'
    # outputs built from mutated sources (an output of the graph is read as it is on disk).
    harness.bazel.run("build", "//core/...", "//third_device/...")
    auditor = Auditor(harness.policy, harness.bazel, [], headers=False, sources=False)
    result = auditor.run()
    produced = {
        o.file.resolve() for o in action_graph.link_outputs(auditor.actions, auditor.execroot())
    }
    stale = []
    bin_core = root / "bazel-bin" / "core"
    for path in sorted(bin_core.glob("*.so")):
        if path.resolve() not in produced:
            stale.append(f"bazel-bin/core/{path.name}")
    after = [f.render() for f in result.findings if f.kind == "ARTIFACT"]
    return StaleReport(before, after, stale, result.artifacts_read)
