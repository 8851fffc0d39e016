"""Settings of the emulated accelerator, like ``torch.backends.cuda``."""

from torch_emu.backends.memory import memory

__all__ = ["memory"]
