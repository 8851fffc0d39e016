"""Backend settings: plain validated attributes read by torch_cuda's kernels."""

from __future__ import annotations


class _MatmulSettings:
    """``torch_cuda.backends.matmul``: precision trade-offs of matrix products."""

    def __init__(self) -> None:
        self._allow_tf32 = False

    @property
    def allow_tf32(self) -> bool:
        """Whether float32 matmuls may use TF32 tensor cores (off by default, as in PyTorch)."""
        return self._allow_tf32

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"allow_tf32 must be a bool, got {type(value).__name__}")
        self._allow_tf32 = value


matmul = _MatmulSettings()
