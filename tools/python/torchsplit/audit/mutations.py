"""The layering mutation harness: inject one violation at a time, see which layer catches it.

One temporary copy of the checkout (a git repository, so each mutation is
reverted with checkout + clean) and one Bazel --output_base, so Bazel stays
warm across mutations. For each mutation the layers run independently:

  visibility  `bazel build --nobuild --keep_going //...`: Bazel's "is not visible" errors
  aspect      the same with --nocheck_visibility: the layering_check aspect's errors
  graph       the genquery expressions of every layering_graph_test (_deps, _public)
              (what `bazel test` checks), evaluated by `bazel query`
  audit       `torchsplit audit`'s graph checks (query/cquery paths, repositories,
              visible() leaks)
  source      the audit's source checks (Python imports, dlopen, includes, BUILD files)
  artifacts   the audit's ELF check of what `compile` built (DT_NEEDED, symbols, .rodata)
  runtime     core's pytest session with the run-time guard (only when core's Python changed)
  scan        the audit's include scan (torchsplit.scan.scanner, coupling scanner)
  compile     `bazel build --keep_going //core/...`: a compile error in the sandbox

A layer catches a mutation when it reports it with the expected message.
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

from torchsplit.audit import cases
from torchsplit.audit.artifacts import check_artifacts
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
    "audit",
    "source",
    "artifacts",
    "runtime",
    "scan",
    "compile",
)

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
            "audit": (f"{_EXT} cannot depend on //third_device/torch_cuda:aten", "via deps of"),
        },
    ),
    Mutation(
        "public-intermediate",
        "core depends on a public //tests:bridge that depends on torch_cuda:aten",
        _public_intermediate,
        {
            "aspect": (f"{_EXT} cannot depend on //third_device/torch_cuda:aten",),
            "audit": ("-> //tests:bridge", "-> //third_device/torch_cuda:aten"),
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
            "audit": (
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
            "audit": (
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
            "scan": (
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
            "scan": ("core/c10/core/Device.cpp", "cuda_runtime.h"),
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
            "audit": (f"{_EXT} cannot depend on @local_cuda//:headers",),
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
            "audit": (f"{_EMU} cannot depend on {_CUDA_FW}",),
        },
    ),
    Mutation(
        "visibility-widened",
        "device_backend's visibility widened to public; core then depends on torch_cuda:framework",
        _widened,
        {
            "aspect": (f"{_EXT} cannot depend on //third_device/torch_cuda:framework",),
            "audit": (
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
            "source": ("dlopen() outside the allowlisted loaders", "'libcudart.so.13'"),
            "artifacts": ("libtorch_core.so", "'libcudart.so.13'"),
        },
    ),
    Mutation(
        "python-import-backend",
        "core profiler: `import torch_emu` in a function; "
        'importlib.import_module("torch_" + "cu" + "da")',
        cases.python_import_backend,
        {
            "source": ("imports torch_emu", "import_module('torch_cuda') loads backend package"),
            "runtime": ("imports backend package torch_cuda",),
        },
    ),
    Mutation(
        "python-ctypes-nvml",
        'core profiler: ctypes.CDLL("libnvidia-ml.so.1")',
        cases.python_ctypes_nvml,
        {
            "source": ("CDLL('libnvidia-ml.so.1')",),
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
            "audit": ("@nv_runtime is not among the repositories core may reach",),
            "source": ("@nv_runtime//:cudart",),
        },
    ),
    Mutation(
        "wrapped-select-rules-cuda",
        "core selects on @rules_cuda//cuda:is_enabled through a neutral //tools macro",
        cases.wrapped_select,
        {
            "graph": ("@rules_cuda//cuda:is_enabled",),
            "audit": ("@rules_cuda//cuda:is_enabled",),
            "source": ("@rules_cuda//cuda:is_enabled", "loaded by core/BUILD.bazel"),
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
            "audit": ("@cuda_wheels//:nvrtc_headers",),
            "source": ("@cuda_wheels//:nvrtc_headers",),
        },
    ),
    Mutation(
        "core-include-dotdot",
        "core/c10/core/Device.cpp includes "
        '"../../../third_device/torch_emu/csrc/framework/EmuDriver.h"',
        cases.include_dotdot,
        {
            "source": ("resolves to third_device/torch_emu/csrc/framework/EmuDriver.h",),
            "compile": ("EmuDriver.h",),
        },
    ),
    Mutation(
        "emu-to-cuda-inactive-select",
        "torch_emu:framework depends on torch_cuda:framework in a select() branch no build takes",
        cases.emu_inactive_select,
        {
            "graph": ("//third_device/torch_cuda:framework",),
            "audit": ("//third_device/torch_cuda:framework", "inactive select() branch"),
            "source": ("//third_device/torch_cuda:framework is another backend's label",),
        },
    ),
    Mutation(
        "public-alias-emu",
        "a public alias of //third_device/torch_emu:framework, no edge to it yet",
        cases.public_alias,
        {
            "audit": ("VISIBILITY [core-to-backend] //third_device/torch_emu:emu_framework",),
            "source": ("a public target in a backend package", "alias() after device_backend()"),
        },
    ),
    Mutation(
        "core-linkopts-cudart",
        'a core cc_library with linkopts = ["-lcudart"], linked into _C.so',
        cases.linkopts_cudart,
        {
            "source": ("linkopts has '-lcudart'",),
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
            "audit": ("@local_cuda//:nvcc",),
            "source": ("@local_cuda//:nvcc",),
        },
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
        if len(self.caught_by) < 2:
            out.append(f"{self.mutation.name}: caught by {self.caught_by} only (< 2 layers)")
        return out


_VIS = re.compile(r"is not visible from target|violates visibility")
_COMPILE = re.compile(r"fatal error:|undeclared inclusion|No such file or directory|cannot find -l")
_RUNTIME = re.compile(r"LAYERING RUNTIME: |LayeringViolation: ")


def _errors(stderr: str, pattern: re.Pattern[str], context: int = 0) -> str:
    lines = stderr.splitlines()
    keep: list[str] = []
    for i, line in enumerate(lines):
        if pattern.search(line):
            keep.extend(lines[i : i + 1 + context])
    return "\n".join(keep)


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
        self.bazel = Bazel(
            workspace=self.root,
            command=[bazel or default_bazel(self.root)],
            startup=[f"--output_base={self.output_base}"],
        )
        self.policy = load_policy(self.root / DEFAULT_POLICY)
        self.policy.path = DEFAULT_POLICY

    def baseline(self) -> AuditResult:
        """The unmutated copy must build (core) and audit clean; this also warms Bazel up."""
        # What the runtime layer's session (tests/core) loads, and no CUDA kernel.
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

    def _packages(self) -> list[str]:
        return Auditor(self.policy, self.bazel, [])._packages()

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

    def _runtime(self) -> LayerResult:
        """Core's test session with the run-time guard, when the mutation changed core's
        Python (the guard watches Python imports and ctypes loads only)."""
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", "core"],
            cwd=self.root, capture_output=True, text=True, check=False,
        ).stdout  # fmt: skip
        if ".py" not in changed:
            return LayerResult(False, "")
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "tests/core", "-x", "-q", "-p", "no:cacheprovider"],
            cwd=self.root,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            timeout=900,
        )
        text = _errors(proc.stdout + proc.stderr, _RUNTIME)
        return LayerResult(proc.returncode != 0 and bool(text), text)

    def run(self, mutation: Mutation) -> MutationResult:
        start = time.monotonic()
        wall = time.time()
        revert(self.root)
        mutation.apply(self.root)
        try:
            out = MutationResult(mutation)
            flags = list(mutation.build_flags)
            vis = self.bazel.run("build", "--nobuild", "--keep_going", *flags, "//...", check=False)
            text = _errors(vis.stderr, _VIS)
            out.layers["visibility"] = LayerResult(vis.returncode != 0 and bool(text), text)
            asp = self.bazel.run(
                "build", "--nobuild", "--keep_going", "--nocheck_visibility", *flags, "//...",
                check=False,
            )  # fmt: skip
            text = _errors(asp.stderr, re.compile(r"Error in fail: |  also: |^  \.\.\. "))
            out.layers["aspect"] = LayerResult(
                asp.returncode != 0 and "cannot depend on" in text, text
            )
            out.layers["graph"] = self._graph()
            audit = Auditor(
                self.policy, self.bazel, list(mutation.cquery_flags), artifacts=False
            ).run()
            graph = AuditResult(
                audit.policy,
                violations=audit.violations,
                visibility=audit.visibility,
                repositories=audit.repositories,
            )
            out.layers["audit"] = LayerResult(not graph.ok, graph.render() if not graph.ok else "")
            source = AuditResult(audit.policy, findings=audit.findings)
            out.layers["source"] = LayerResult(
                not source.ok, source.render() if not source.ok else ""
            )
            headers = AuditResult(audit.policy, headers=audit.headers)
            out.layers["scan"] = LayerResult(
                not headers.ok, headers.render() if not headers.ok else ""
            )
            comp = self.bazel.run("build", "--keep_going", *flags, "//core/...", check=False)
            text = _errors(comp.stderr, _COMPILE)
            out.layers["compile"] = LayerResult(comp.returncode != 0 and bool(text), text)
            found, _ = check_artifacts(
                self.root / "bazel-bin", self.root, self.policy, self._packages(), newer_than=wall
            )
            text = "\n".join(f.render() for f in found)
            out.layers["artifacts"] = LayerResult(bool(found), text)
            out.layers["runtime"] = self._runtime()
            for layer, wanted in mutation.expect.items():
                out.layers[layer].message_ok = all(w in out.layers[layer].evidence for w in wanted)
        finally:
            revert(self.root)
        out.seconds = time.monotonic() - start
        return out

    def close(self) -> None:
        self.bazel.run("shutdown", check=False)


def run_all(source: Path, mutations: tuple[Mutation, ...] = MUTATIONS, bazel: str | None = None,
            log: Callable[[str], None] | None = None) -> list[MutationResult]:  # fmt: skip
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
            return results
        finally:
            harness.close()


def render_matrix(results: list[MutationResult]) -> str:
    """Markdown table: one row per mutation, one column per layer."""
    header = ["violation", *LAYERS, "layers"]
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
