"""Where torch_cuda looks for the NVIDIA libraries it loads at run time (NVRTC, NCCL).

First beside the CUDA runtime _CUDAC was loaded with: _CUDAC's RUNPATH found
that one in the toolkit it was built and pinned against (NVIDIA's wheels of
an installed torch_cuda, or the hermetic toolkit of a source build, where
the directory's lock installed NVRTC and NCCL too). Then in the installed
``nvidia`` namespace package, in sys.path order. So another framework's
NVIDIA wheels earlier on the path (a CUDA build of torch pulls its own) do not
shadow the pinned ones.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from torch_cuda import _CUDAC


def runtime_directory() -> Path | None:
    """The directory of the libcudart _CUDAC loaded (symlinks resolved); None if static."""
    library = _CUDAC._runtime_library()
    return Path(os.path.realpath(library)).parent if library else None


def search_roots() -> list[Path]:
    """Roots of NVIDIA's wheel layout (``<root>/cu13/lib``, ``<root>/nccl/lib``), in order."""
    roots: list[Path] = []
    runtime = runtime_directory()
    # Wheel layout: <root>/cu13/lib/libcudart.so.13 (a system toolkit has none).
    if runtime is not None and runtime.parent.parent.name == "nvidia":
        roots.append(runtime.parent.parent)
    spec = importlib.util.find_spec("nvidia")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            root = Path(os.path.realpath(location))
            if root not in roots:
                roots.append(root)
    return roots


def search_directories(subdirs: tuple[str, ...]) -> list[Path]:
    """``<root>/<subdir>/lib`` for every root and subdir, after the runtime's own directory."""
    runtime = runtime_directory()
    found = [runtime] if runtime is not None else []
    for root in search_roots():
        for sub in subdirs:
            lib = root / sub / "lib"
            if lib not in found:
                found.append(lib)
    return found
