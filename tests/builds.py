"""What the build in this checkout produced (a cpu-only build has no torch_cuda extension)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

NO_CUDA_BUILD = (
    "torch_cuda was not built here (cpu-only build or no CUDA toolkit: "
    "tools/dev build names the reason)"
)


def cuda_extension_built() -> bool:
    """Whether _CUDAC.so is in bazel-bin (checkout) or beside the sources (runfiles)."""
    return any(
        (base / "third_device/torch_cuda/torch_cuda/_CUDAC.so").exists()
        for base in (REPO / "bazel-bin", REPO)
    )
