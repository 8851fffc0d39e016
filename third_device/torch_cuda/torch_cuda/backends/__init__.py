"""Settings of the CUDA backend, like ``torch.backends.cuda``."""

from torch_cuda.backends.settings import matmul

__all__ = ["matmul"]
