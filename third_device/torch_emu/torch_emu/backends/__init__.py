"""Settings of the emulated backend, like ``torch.backends.cuda``."""

from torch_emu.backends.memory import memory

__all__ = ["memory"]
