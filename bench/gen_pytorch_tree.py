"""Generate a synthetic PyTorch-scale source tree for the query/analysis benchmark.

Writes, into OUT:
  build_variables.bzl   PyTorch-style: upstream's list names with upstream's entry counts
                        (2025), composed the same way (aliases, ``+``, ``sorted(...)``,
                        functions with a ``gencode_pattern``, ``.extend``); the three known
                        traps (CUDA-named files in core lists) are kept
  <every listed path>   an empty placeholder source
  BUILD.bazel           exports every placeholder
  core/, third_device/  the BUILD overlay from ``torchsplit reorg emit`` (the reorganiser)
  WORKSPACE             the project's local rule repositories (absolute paths)

No upstream file is copied: names and counts are facts, paths are generated.
Usage: python3 bench/gen_pytorch_tree.py OUT
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# (list name, entries, path pattern): literal lists, upstream counts (build_variables.bzl, 2025).
LITERAL_LISTS: list[tuple[str, int, str]] = [
    ("GENERATED_LAZY_TS_CPP", 3, "lazy/generated/Lazy{i}.cpp"),
    ("jit_core_headers", 16, "torch/csrc/jit/frontend/header_{i}.h"),
    ("jit_core_sources", 6, "torch/csrc/jit/frontend/core_{i}.cpp"),
    ("core_sources_common", 17, "torch/csrc/jit/runtime/common_{i}.cpp"),
    ("torch_unpickler_common", 3, "torch/csrc/jit/serialization/unpickle_{i}.cpp"),
    ("libtorch_profiler_sources", 19, "torch/csrc/profiler/prof_{i}.cpp"),
    ("core_trainer_sources", 24, "torch/csrc/autograd/trainer_{i}.cpp"),
    ("torch_mobile_core", 14, "torch/csrc/jit/mobile/core_{i}.cpp"),
    ("core_sources_full_mobile_no_backend_interface_xplat", 211, "torch/csrc/jit/passes/p_{i}.cpp"),
    ("lazy_tensor_core_sources", 24, "torch/csrc/lazy/core/lazy_{i}.cpp"),
    ("lazy_tensor_ts_sources", 12, "torch/csrc/lazy/ts_backend/ts_{i}.cpp"),
    ("lazy_tensor_core_python_sources", 2, "torch/csrc/lazy/python/py_{i}.cpp"),
    ("inductor_core_resources", 11, "torch/csrc/inductor/aoti_torch/ind_{i}.cpp"),
    ("libtorch_distributed_base_sources", 37, "torch/csrc/distributed/c10d/base_{i}.cpp"),
    ("libtorch_distributed_extra_sources", 40, "torch/csrc/distributed/rpc/extra_{i}.cpp"),
    ("jit_sources_full", 8, "torch/csrc/jit/runtime/full_{i}.cpp"),
    ("libtorch_nativert_sources", 47, "torch/nativert/executor/nrt_{i}.cpp"),
    ("libtorch_nativert_mtia_sources", 1, "torch/nativert/executor/mtia_{i}.cpp"),
    ("libtorch_nativert_cuda_sources", 2, "torch/nativert/executor/CudaShim{i}.cpp"),
    ("torch_mobile_tracer_sources", 8, "torch/csrc/jit/mobile/model_tracer/tr_{i}.cpp"),
    ("libtorch_lite_eager_symbolication", 9, "torch/csrc/jit/mobile/sym_{i}.cpp"),
    ("libtorch_extra_only_sources", 33, "torch/csrc/jit/serialization/extra_{i}.cpp"),
    ("libtorch_cuda_core_sources", 13, "torch/csrc/cuda/core_{i}.cpp"),
    (
        "libtorch_cuda_distributed_base_sources",
        1,
        "torch/csrc/distributed/c10d/reducer_cuda_{i}.cpp",
    ),
    (
        "libtorch_cuda_distributed_extra_sources",
        14,
        "torch/csrc/distributed/c10d/cuda/extra_{i}.cpp",
    ),
    ("libtorch_nvshmem_sources", 4, "torch/csrc/distributed/c10d/symm_mem/nvshmem_{i}.cpp"),
    ("torch_cpp_srcs", 61, "torch/csrc/api/src/nn/api_{i}.cpp"),
    ("libtorch_python_cuda_core_sources", 11, "torch/csrc/cuda/python_{i}.cpp"),
    ("libtorch_python_xpu_sources", 9, "torch/csrc/xpu/xpu_{i}.cpp"),
    ("libtorch_python_core_sources", 150, "torch/csrc/utils/python_{i}.cpp"),
    ("libtorch_python_distributed_core_sources", 3, "torch/csrc/distributed/c10d/pyinit_{i}.cpp"),
    ("aten_cpu_non_globed_sources", 12, "aten/src/ATen/detail/Hooks{i}.cpp"),
    ("aten_cpu_non_globed_headers", 13, "aten/src/ATen/detail/Hooks{i}.h"),
    ("aten_cpu_source_non_codegen_list", 107, "aten/src/ATen/core/Cpu{i}.cpp"),
    ("aten_cpu_source_codegen_list", 2, "aten/src/ATen/native/cpu/Codegen{i}.cpp"),
    ("aten_ufunc_headers", 1, "aten/src/ATen/native/ufunc/ufunc_{i}.h"),
    ("aten_native_source_codegen_list", 64, "aten/src/ATen/native/cpu/Kernel{i}.cpp"),
    ("aten_native_source_non_codegen_list", 230, "aten/src/ATen/native/Native{i}.cpp"),
    ("aten_cuda_cu_source_list", 27, "aten/src/ATen/native/cuda/CudaHost{i}.cpp"),
    ("aten_cuda_with_sort_by_key_source_list", 1, "aten/src/ATen/native/cuda/SortByKey{i}.cu"),
    ("aten_cuda_cu_with_sort_by_key_source_list", 1, "aten/src/ATen/native/cuda/Unique{i}.cu"),
    ("xnnpack_backend_source_list", 4, "torch/csrc/jit/backends/xnnpack/xnn_{i}.cpp"),
]
# Upstream finds ATen's .cu kernels by glob; the synthetic tree lists them.
CUDA_KERNEL_GLOB = ("aten_cuda_kernels_glob", 100, "aten/src/ATen/native/cuda/Kernel{i}.cu")
# Appended to the lists upstream has them in: CUDA-named files inside core lists, .cu files.
EXTRA_ENTRIES: dict[str, list[str]] = {
    "libtorch_distributed_base_sources": ["torch/csrc/distributed/c10d/cuda/StreamBlock.cpp"],
    "aten_cpu_non_globed_sources": ["aten/src/ATen/detail/CUDAHooksInterface.cpp"],
    "jit_sources_full": ["torch/csrc/jit/codegen/cuda/interface.cpp"],
    "libtorch_cuda_distributed_extra_sources": [
        f"torch/csrc/distributed/c10d/symm_mem/CUDASymm{i}.cu" for i in range(9)
    ],
}

DERIVED = """
def libtorch_generated_sources(gencode_pattern):
    return [gencode_pattern.format(name) for name in [
        "torch/csrc/autograd/generated/Gen%d.cpp" % i for i in range(14)
    ]]

libtorch_sources_common = sorted(core_sources_common + torch_unpickler_common)
libtorch_edge_profiler_sources = libtorch_profiler_sources + ["torch/csrc/jit/mobile/edge.cpp"]
core_sources_full_mobile_no_backend_interface = (
    core_sources_full_mobile_no_backend_interface_xplat + torch_mobile_core[:12]
)
core_sources_full_mobile = core_sources_full_mobile_no_backend_interface + [
    "torch/csrc/jit/backends/backend_interface.cpp",
]
core_sources_full = core_sources_full_mobile + [
    "torch/csrc/jit/runtime/static/s%d.cpp" % i
    for i in range(10)
]
libtorch_core_sources = sorted(
    core_sources_common +
    torch_unpickler_common +
    core_sources_full +
    core_trainer_sources +
    inductor_core_resources +
    libtorch_profiler_sources +
    lazy_tensor_core_sources,
)
libtorch_distributed_sources = (
    libtorch_distributed_base_sources + libtorch_distributed_extra_sources
)
libtorch_core_jit_sources = sorted(jit_sources_full)
libtorch_lite_cmake_sources = sorted(
    core_trainer_sources + core_sources_common + torch_unpickler_common + torch_mobile_core,
)
libtorch_cmake_sources = (
    libtorch_core_sources + libtorch_core_jit_sources + libtorch_nativert_sources
)
libtorch_extra_sources = libtorch_core_jit_sources + libtorch_extra_only_sources

def libtorch_sources(gencode_pattern = ":generate-code[{}]"):
    return (
        libtorch_generated_sources(gencode_pattern) + libtorch_core_sources +
        libtorch_distributed_sources + libtorch_extra_sources + libtorch_nativert_sources
    )

libtorch_cuda_distributed_sources = (
    libtorch_cuda_distributed_base_sources + libtorch_cuda_distributed_extra_sources
)
libtorch_cuda_sources = libtorch_cuda_core_sources + libtorch_cuda_distributed_sources + [
    "torch/csrc/cuda/nccl.cpp",
] + libtorch_nativert_cuda_sources
libtorch_mtia_sources = libtorch_nativert_mtia_sources
libtorch_python_cuda_sources = libtorch_python_cuda_core_sources + [
    "torch/csrc/cuda/python_nccl.cpp",
    "torch/csrc/cuda/shared/cudnn.cpp",
    "torch/csrc/cuda/shared/cusparselt.cpp",
]
libtorch_xpu_sources = libtorch_python_xpu_sources
libtorch_python_distributed_sources = libtorch_python_distributed_core_sources + [
    "torch/csrc/distributed/rpc/pyinit_%d.cpp" % i for i in range(11)
]

def glob_libtorch_python_sources(gencode_pattern = ":generate-code[{}]"):
    _libtorch_python_sources = [gencode_pattern.format(name) for name in [
        "torch/csrc/autograd/generated/python_functions_%d.cpp" % i for i in range(18)
    ]]
    _libtorch_python_sources.extend(libtorch_python_core_sources)
    _libtorch_python_sources.extend(libtorch_python_distributed_sources)
    return _libtorch_python_sources

aten_cpu_source_list = sorted(aten_cpu_source_non_codegen_list + aten_cpu_source_codegen_list)
aten_native_source_list = sorted(
    aten_native_source_non_codegen_list + aten_native_source_codegen_list,
)
"""


def render_build_variables() -> tuple[str, list[str]]:
    """The .bzl text and every path it names (placeholders to create)."""
    out = [
        "# Synthetic PyTorch-style build_variables.bzl (generated by bench/gen_pytorch_tree.py).\n"
    ]
    paths: list[str] = []
    for name, count, pattern in [*LITERAL_LISTS, CUDA_KERNEL_GLOB]:
        entries = [pattern.format(i=i) for i in range(count)] + EXTRA_ENTRIES.get(name, [])
        paths.extend(entries)
        out.append(f"\n{name} = [\n" + "".join(f'    "{e}",\n' for e in entries) + "]\n")
    out.append(DERIVED)
    extra = [
        "torch/csrc/jit/mobile/edge.cpp",
        "torch/csrc/jit/backends/backend_interface.cpp",
        "torch/csrc/cuda/nccl.cpp",
        "torch/csrc/cuda/python_nccl.cpp",
        "torch/csrc/cuda/shared/cudnn.cpp",
        "torch/csrc/cuda/shared/cusparselt.cpp",
        *(f"torch/csrc/jit/runtime/static/s{i}.cpp" for i in range(10)),
        *(f"torch/csrc/distributed/rpc/pyinit_{i}.cpp" for i in range(11)),
    ]
    return "".join(out), sorted(set(paths + extra))


def workspace_text() -> str:
    repos = REPO / "tools" / "repos"
    names = ("rules_cc", "rules_java", "remote_coverage_tools", "rules_cuda")
    text = 'workspace(name = "synthetic_pytorch")\n'
    text += "".join(f'local_repository(name = "{n}", path = "{repos / n}")\n' for n in names)
    text += 'load("@rules_cuda//cuda:repositories.bzl", "rules_cuda_dependencies")\n'
    text += "rules_cuda_dependencies()\n"
    return text


def generate(out: Path) -> dict[str, int]:
    """Writes the tree; returns counts (sources, BUILD files)."""
    out.mkdir(parents=True, exist_ok=True)
    bzl, paths = render_build_variables()
    (out / "build_variables.bzl").write_text(bzl)
    for rel in paths:
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    (out / "WORKSPACE").write_text(workspace_text())
    (out / "BUILD.bazel").write_text(
        'exports_files(glob(["torch/**", "aten/**", "lazy/**"]), '
        'visibility = ["//visibility:public"])\n'
    )
    emitted = Path(tempfile.mkdtemp(prefix="torchsplit-emit-"))
    subprocess.run(
        [
            str(REPO / "tools" / "torchsplit"),
            *("reorg", "emit", str(out / "build_variables.bzl"), "--out", str(emitted)),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    # Upstream's generated sources are Buck-style labels (":generate-code[path]"): the
    # synthetic tree has plain placeholder files there instead.
    split = (emitted / "build_variables_split.bzl").read_text()
    generated = sorted(set(re.findall(r'":generate-code\[([^\]]+)\]"', split)))
    for rel in generated:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).touch()
    split = re.sub(r'":generate-code\[([^\]]+)\]"', r'"\1"', split)
    (out / "build_variables_split.bzl").write_text(split)
    builds = 0
    overlay = emitted / "overlay"
    for src in sorted(overlay.rglob("BUILD.bazel")):
        dest = out / src.relative_to(overlay)
        if dest.parent == out:
            continue  # the root BUILD (exports) is ours
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(src.read_text())
        builds += 1
    paths += generated
    shutil.rmtree(emitted, ignore_errors=True)
    return {"sources": len(paths), "build_files": builds}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path, help="directory to write the tree into")
    counts = generate(parser.parse_args(argv).out)
    print(f"{counts['sources']} placeholder sources, {counts['build_files']} BUILD files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
