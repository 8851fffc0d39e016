"""The run-time layer: core code loading a backend or a vendor library fails the test session.

Installed by tests/conftest.py in every pytest session. Two hooks:

* a ``sys.meta_path`` finder, consulted for every module not imported yet
  (``import x``, ``importlib.import_module``, ``__import__`` alike: the
  ``import`` audit event misses ``importlib.import_module``);
* ``sys.addaudithook`` for ``import`` and ``ctypes.dlopen`` events.

A load counts as core's when the innermost frame from the repository's files is
under a core Python root and is not an allowlisted loader (policy
DYNAMIC_LOADERS): a test importing torch_emu is fine, torch_core's profiler is
not. The offending load raises :class:`LayeringViolation` and is recorded, so a
caller that swallows the exception still fails the session.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from torchsplit import vendors

_THIS = str(Path(__file__).resolve())


class LayeringViolation(RuntimeError):
    """Core code loaded a backend or a vendor library at run time."""


class Guard:
    def __init__(
        self,
        repo: Path,
        core_roots: Sequence[Path],
        backends: Sequence[str],
        loaders: Sequence[str],
    ) -> None:
        self.repo = str(repo.resolve()) + "/"
        self.core_roots = [str(r.resolve()) + "/" for r in core_roots]
        self.backends = set(backends)
        # Repository-relative suffixes: the same file is loaded from the source tree
        # or from bazel-bin (a different root, the same relative path).
        self.loader_suffixes = tuple("/" + rel.lstrip("/") for rel in loaders)
        self.violations: list[str] = []

    # -- who is loading? ---------------------------------------------------------------
    def _core_caller(self, frame: FrameType | None) -> str | None:
        while frame is not None:
            name = frame.f_code.co_filename
            if name != _THIS and name.startswith("/"):
                path = str(Path(name).resolve())
                if path.startswith(self.repo) or any(path.startswith(r) for r in self.core_roots):
                    if any(path.startswith(r) for r in self.core_roots):
                        if path.endswith(self.loader_suffixes):
                            return None
                        shown = path.removeprefix(self.repo)
                        return f"{shown}:{frame.f_lineno}"
                    return None
            frame = frame.f_back
        return None

    def _forbidden_module(self, module: str) -> str | None:
        top = module.split(".", 1)[0]
        if top in self.backends:
            return f"backend package {top}"
        family = vendors.python_module_family(module)
        return f"{family} vendor module {module}" if family else None

    def _forbidden_library(self, name: str) -> str | None:
        family = vendors.library_family(name)
        if family:
            return f"{family} vendor library {name}"
        if "/third_device/" in name or any(f"/{b}/" in name for b in self.backends):
            return f"backend library {name}"
        return None

    def _check(self, what: str | None, action: str) -> None:
        if what is None:
            return
        caller = self._core_caller(sys._getframe(2))
        if caller is None:
            return
        message = f"{caller} {action} {what} (core may not load it; tools/layering/policy.bzl)"
        self.violations.append(message)
        raise LayeringViolation(message)

    # -- hooks -------------------------------------------------------------------------
    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        self._check(self._forbidden_module(fullname), "imports")
        return None  # never finds anything itself

    def audit(self, event: str, args: tuple[object, ...]) -> None:
        if event == "ctypes.dlopen" and args and isinstance(args[0], str):
            self._check(self._forbidden_library(args[0]), "loads")
        elif event == "import" and args and isinstance(args[0], str):
            self._check(self._forbidden_module(args[0]), "imports")


def install(
    repo: Path, core_roots: Sequence[Path], backends: Sequence[str], loaders: Sequence[str]
) -> Guard:
    """Installs the guard for the rest of the process (audit hooks cannot be removed)."""
    guard = Guard(repo, core_roots, backends, loaders)
    sys.meta_path.insert(0, guard)  # type: ignore[arg-type]
    sys.addaudithook(guard.audit)
    return guard
