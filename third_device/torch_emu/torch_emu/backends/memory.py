"""``torch_emu.backends.memory``: the emulated devices' memory capacity."""

from __future__ import annotations

from torch_emu import _EMUC


class _MemorySettings:
    def limit(self, device: int = 0) -> int:
        """Bytes the device's heap may hand out (TORCH_EMU_MEMORY_LIMIT, default 16 GiB)."""
        return int(_EMUC._memory_limit(device))

    def set_limit(self, limit: int, device: int = 0) -> None:
        """Caps the device's heap; allocations beyond it fail as out-of-memory."""
        if not isinstance(limit, int) or limit < 0:
            raise ValueError(f"limit must be a non-negative int of bytes, got {limit!r}")
        _EMUC._set_memory_limit(device, limit)

    def used(self, device: int = 0) -> int:
        """Bytes currently handed out by the device's heap."""
        return int(_EMUC._memory_used(device))


memory = _MemorySettings()
