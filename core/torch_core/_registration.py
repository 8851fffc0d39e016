"""Name registries that refuse a second owner.

Backends register process-group backends and fusers (and, in C++, device types
and profiler stubs) by name. Two backends claiming one name used to replace
each other silently: importing a copied backend broke the original's
collectives at run time. A :class:`Registry` records who claimed each name and
raises :class:`RegistrationError` naming both claimants instead.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class RegistrationError(ValueError):
    """A name is already registered by another owner."""


def calling_package(depth: int = 2) -> str:
    """The top-level package of the code ``depth`` frames up (the registering backend)."""
    frame = sys._getframe(depth)
    module = str(frame.f_globals.get("__name__", "?"))
    return module.split(".", 1)[0]


class Registry(Generic[T]):
    """``name -> (owner, value)``; one owner per name, re-registration by that owner replaces."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[str, T]] = {}

    def claim(self, name: str, value: T, owner: str) -> None:
        with self._lock:
            held = self._entries.get(name)
            if held is not None and held[0] != owner:
                raise RegistrationError(
                    f"{self._what} '{name}' is already registered by {held[0]}; {owner} "
                    "cannot register it too (names are unique across backends)"
                )
            self._entries[name] = (owner, value)

    def get(self, name: str) -> T | None:
        with self._lock:
            held = self._entries.get(name)
        return None if held is None else held[1]

    def owner(self, name: str) -> str | None:
        with self._lock:
            held = self._entries.get(name)
        return None if held is None else held[0]

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return name in self._entries

    def items(self) -> Iterator[tuple[str, T]]:
        with self._lock:
            snapshot = sorted((n, v) for n, (_, v) in self._entries.items())
        return iter(snapshot)
