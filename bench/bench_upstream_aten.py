"""Benchmark: how far real ATen CUDA sources get under the split (docs/upstream.md, stretch).

Usage: python3 bench/bench_upstream_aten.py TREE --cuda-libs DIR [--jobs N]

TREE is a tree `tools/dev upstream` restructured (~/.cache/torchsplit/upstream/
2.6.0-split). The script runs torchgen (the tree's own, with a Python that has PyYAML and
typing_extensions) into a temporary directory, writes what CMake would configure
(ATen/Config.h, ATen/cuda/CUDAConfig.h, c10's macro headers), lays out the moved headers
under their old include spelling from the tree's torchsplit/include_map.tsv (what the
overlay's header libraries do in Bazel), then compiles a fixed sample: 10 `.cu` from
ATen/native/cuda with torchsplit's hermetic nvcc 13.0 for sm_90, and 10 `.cpp` from
ATen/cuda with the host compiler. --cuda-libs is a directory holding NVIDIA's cu12
cuBLAS, cuSPARSE and cuSOLVER wheels' `nvidia/*/include` (ATen's CUDA headers include
them; the hermetic toolkit has none). Prints per file: compiled or the first error,
and seconds. Compiles outside Bazel: torchgen's 7,000 outputs are not a Bazel target
of the tree yet. Asserts nothing; writes only under a temporary directory (torchgen's
AOTInductor shims too, which it would otherwise write into the tree).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CU_SAMPLE = [
    "FillKernel.cu",
    "UnaryOpsKernel.cu",
    "Nonzero.cu",
    "AbsKernel.cu",
    "BinaryMulKernel.cu",
    "CompareEQKernel.cu",
    "CopysignKernel.cu",
    "ZetaKernel.cu",
    "RecordStream.cu",
    "CumsumKernel.cu",
]
CPP_SAMPLE = [
    "CUDABlas.cpp",
    "CUDAContext.cpp",
    "CUDAGeneratorImpl.cpp",
    "CUDAGraph.cpp",
    "CUDASparseBlas.cpp",
    "CUDASparseDescriptors.cpp",
    "CachingHostAllocator.cpp",
    "CuSparseHandlePool.cpp",
    "CublasHandlePool.cpp",
    "EmptyTensor.cpp",
]
ATEN = "third_device/torch_cuda/csrc/aten"
# What PyTorch's CMake passes to every CUDA compile (cmake/public/cuda.cmake, utils.cmake).
NVCC_FLAGS = [
    "-std=c++17",
    "-arch=sm_90",
    "--expt-relaxed-constexpr",
    "--expt-extended-lambda",
    "-DCUDA_HAS_FP16=1",
    "-D__CUDA_NO_HALF_OPERATORS__",
    "-D__CUDA_NO_HALF_CONVERSIONS__",
    "-D__CUDA_NO_HALF2_OPERATORS__",
    "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "-Xcompiler=-fPIC",
]
DEFINES = ["-DUSE_CUDA", "-DTORCH_CUDA_BUILD_MAIN_LIB", "-DAT_PER_OPERATOR_HEADERS"]


def _hermetic_toolkit() -> Path:
    lock = REPO / "tools" / "cuda" / "requirements_lock.txt"
    cache = os.environ.get("TORCHSPLIT_CUDA_CACHE") or str(Path.home() / ".cache/torchsplit/cuda")
    return Path(cache) / hashlib.sha256(lock.read_bytes()).hexdigest() / "nvidia" / "cu13"


def _configure(template: Path, out: Path, values: dict[str, str]) -> None:
    text = template.read_text()
    text = re.sub(r"#cmakedefine (\w+)", lambda m: f"/* #undef {m.group(1)} */", text)
    text = re.sub(r"@(\w+)@", lambda m: values.get(m.group(1), "0"), text)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)


def _link(view: Path, include: str, target: Path) -> None:
    dest = view / include
    dest.parent.mkdir(parents=True, exist_ok=True)
    if not dest.exists():
        dest.symlink_to(target)


def build_view(tree: Path, gen: Path, view: Path) -> None:
    """The include view: generated ATen under ATen/, moved headers under their old names."""
    for row in (tree / "torchsplit/include_map.tsv").read_text().splitlines()[1:]:
        include, file = row.split("\t")[:2]
        _link(view, include, tree / file)
    for path in gen.rglob("*"):
        if path.is_file():
            _link(view, f"ATen/{path.relative_to(gen).as_posix()}", path)
    _configure(tree / "aten/src/ATen/Config.h.in", view / "ATen/Config.h", {})
    _configure(
        tree / ATEN / "cuda/CUDAConfig.h.in",
        view / "ATen/cuda/CUDAConfig.h",
        {"NVCC_FLAGS_EXTRA": ""},
    )
    _configure(tree / "c10/macros/cmake_macros.h.in", view / "c10/macros/cmake_macros.h", {})
    _configure(
        tree / "third_device/torch_cuda/csrc/framework/cuda/impl/cuda_cmake_macros.h.in",
        view / "c10/cuda/impl/cuda_cmake_macros.h",
        {},
    )


def compile_one(cmd: list[str], cwd: Path) -> tuple[bool, float, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if proc.returncode == 0:
        return True, seconds, ""
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    return False, seconds, (errors[0] if errors else proc.stderr.strip()[-300:])[:300]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", help="a tree restructured by `tools/dev upstream`")
    parser.add_argument("--cuda-libs", required=True, help="dir with nvidia/*/include of cu12 libs")
    parser.add_argument(
        "--python", default="python3", help="a Python with PyYAML and typing_extensions"
    )
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    tree, libs = Path(args.tree).resolve(), Path(args.cuda_libs).resolve()
    toolkit = _hermetic_toolkit()
    nvcc = toolkit / "bin" / "nvcc"
    if not nvcc.exists():
        print(f"no hermetic nvcc at {nvcc}: run tools/dev bootstrap", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench_upstream_aten_") as tmp:
        gen, view = Path(tmp) / "gen", Path(tmp) / "view"
        start = time.perf_counter()
        proc = subprocess.run(
            [args.python, "-m", "torchgen.gen", "--source-path", "aten/src/ATen",
             "--install_dir", str(gen), "--per-operator-headers", "--generate", "headers",
             "sources", "--aoti-install-dir", str(Path(tmp) / "aoti")],
            cwd=tree, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            print(f"torchgen failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
            return 1
        files = sum(1 for p in gen.rglob("*") if p.is_file())
        if subprocess.run(["git", "status", "--porcelain"], cwd=tree, capture_output=True,
                          text=True, check=False).stdout.strip():  # fmt: skip
            print(f"note: {tree} has changes (torchsplit upstream restructure will refuse it)")
        print(f"torchgen: {files} files in {time.perf_counter() - start:.1f} s")
        build_view(tree, gen, view)
        includes = [f"-I{view}", f"-I{tree}", f"-I{tree / 'aten/src'}"]
        for d in sorted(libs.glob("nvidia/*/include")):
            includes += ["-isystem", str(d)]
        host = ["g++", "-std=c++17", "-fPIC", "-c", "-o", os.devnull, *DEFINES, *includes]
        host += ["-isystem", str(toolkit / "include")]
        nvcc_cmd = [str(nvcc), "-x", "cu", *NVCC_FLAGS, *DEFINES, *includes, "-o", os.devnull]
        jobs = [
            (f"native/cuda/{name}", [*nvcc_cmd, "-c", str(tree / ATEN / "native/cuda" / name)])
            for name in CU_SAMPLE
        ]
        jobs += [(f"cuda/{name}", [*host, str(tree / ATEN / "cuda" / name)]) for name in CPP_SAMPLE]
        env_path = f"{toolkit / 'bin'}:{os.environ.get('PATH', '')}"
        os.environ["PATH"] = env_path
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = list(pool.map(lambda job: (job[0], *compile_one(job[1], tree)), jobs))
    ok = 0
    print("| file | result | seconds |\n| --- | --- | ---: |")
    for name, passed, seconds, error in results:
        ok += passed
        print(f"| {name} | {'compiled' if passed else 'FAILED: ' + error} | {seconds:.1f} |")
    cu_ok = sum(p for n, p, _, _ in results if n.endswith(".cu"))
    print(f"compiled {ok} of {len(results)}: {cu_ok} of {len(CU_SAMPLE)} .cu, "
          f"{ok - cu_ok} of {len(CPP_SAMPLE)} .cpp")  # fmt: skip
    shutil.rmtree(view, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
