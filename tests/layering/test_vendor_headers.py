"""The audit's vendor-header check (TOOLKITS): a backend including a vendor SDK header of a
toolkit not its own is reported; a backend including its own headers never is, whatever
vendor word their names hold. Small trees, no Bazel."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from builds import REPO
from torchsplit.audit.auditor import Auditor, AuditResult, own_header
from torchsplit.backend import policy_edit

MUSA = policy_edit.Grant("torch_musa", "torch_hip", "torch_cuda", ("hipify_sources",))
# torch_musa as new-backend --from torch_cuda --translate hip makes it: torch_hip's toolkit.
POLICY = policy_edit.edit_policy((REPO / policy_edit.POLICY).read_text(), MUSA)[1]

FILES = {
    # Its own headers: generated from torch_cuda's by the translation (not in the tree),
    # hand-written beside it, relative. "Nccl", "Nvtx" are CUDA words: not SDK headers here.
    "third_device/torch_musa/csrc/distributed/Rccl.cpp": (
        '#include "torch_musa/csrc/distributed/Nccl.h"\n'
        '#include "third_device/torch_musa/csrc/profiler/NvtxRange.h"\n'
        '#include "../profiler/NvtxRange.h"\n'
        '#include "CudaLocal.h"\n'
        "#include <hip/hip_runtime.h>\n"  # its own toolkit's: fine
        "#include <nccl.h>\n"  # NCCL's SDK header: not its toolkit
        '#include "torch_cuda/csrc/distributed/Nccl.h"\n'  # its parent's: not its own
    ),
    "third_device/torch_musa/csrc/distributed/CudaLocal.h": "",
    # A backend without a toolkit including a CUDA-named header of its own, and an SDK one.
    "third_device/torch_emu/csrc/framework/Probe.cpp": (
        '#include "torch_emu/csrc/framework/CudaCompat.h"\n#include <cuda_runtime.h>\n'
    ),
}


def _audit(root: Path) -> list[str]:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    auditor = Auditor(POLICY, SimpleNamespace(workspace=root), [])  # type: ignore[arg-type]
    auditor.packages = ["core", "third_device/torch_emu", "third_device/torch_musa"]
    result = AuditResult(policy=POLICY.path)
    auditor._vendor_headers({}, result)
    return [f"{h.path}:{h.line}: {h.message}" for h in result.headers]


def test_own_headers_are_not_vendor_sdk_headers(tmp_path: Path) -> None:
    assert _audit(tmp_path) == [
        "third_device/torch_emu/csrc/framework/Probe.cpp:2: torch_emu -> cuda toolkit (not its "
        "own): includes <cuda_runtime.h>, a cuda SDK header",
        "third_device/torch_musa/csrc/distributed/Rccl.cpp:6: torch_musa -> cuda toolkit (not "
        "its own): includes <nccl.h>, a cuda SDK header",
        "third_device/torch_musa/csrc/distributed/Rccl.cpp:7: torch_musa -> cuda toolkit (not "
        "its own): includes <torch_cuda/csrc/distributed/Nccl.h>, a cuda SDK header",
    ]


def test_own_header(tmp_path: Path) -> None:
    path = "third_device/torch_musa/csrc/x/A.cpp"
    (tmp_path / "third_device/torch_musa/csrc/x").mkdir(parents=True)
    (tmp_path / "third_device/torch_musa/csrc/x/Nccl.h").write_text("")
    assert own_header(tmp_path, "torch_musa", path, "torch_musa/csrc/Nccl.h")
    assert own_header(tmp_path, "torch_musa", path, "third_device/torch_musa/Nccl.h")
    assert own_header(tmp_path, "torch_musa", path, "../y/Nccl.h")
    assert own_header(tmp_path, "torch_musa", path, "Nccl.h")  # beside it
    assert not own_header(tmp_path, "torch_musa", path, "nccl.h")  # not beside it: the SDK's
    assert not own_header(tmp_path, "torch_musa", path, "../../../torch_cuda/Nccl.h")
    assert not own_header(tmp_path, "torch_musa", path, "torch_musa_extra/Nccl.h")
    assert not own_header(tmp_path, "torch_mu", path, "torch_musa/Nccl.h")
