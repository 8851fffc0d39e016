"""The run-time layer: a layer's code coupling to another layer at run time fails the run.

Installed by tests/conftest.py in every pytest session, and by the ``torchsplit_layering``
start-up hook (tools/dev bootstrap writes it into the virtualenv) in every Python process
a test starts (TORCHSPLIT_LAYERING_GUARD names the checkout) and in every ``python -X dev``
run inside a checkout. Hooks:

* a ``sys.meta_path`` finder, consulted for every module not imported yet
  (``import x``, ``importlib.import_module``, ``__import__`` alike: the ``import``
  audit event misses ``importlib.import_module``);
* ``sys.addaudithook`` for ``import``, ``ctypes.dlopen`` and the process events
  (``subprocess.Popen``, ``os.system``, ``os.exec``, ``os.posix_spawn``, ``os.spawn``);
* ``os.environ`` reads and writes by name (``os.environ[...]``, ``.get``, ``in``,
  ``.setdefault``, ``.pop``, ``os.getenv``; not a copy of the whole environment).

A coupling counts when the innermost frame from the repository's files (for the
environment: the code that names the variable) belongs to a guarded layer (core, or a
backend: any directory under third_device/) and what it loads, runs or reads belongs to
another layer: a backend's package or library (core's allowlisted loaders, policy
DYNAMIC_LOADERS, may import backends by entry point), or a vendor module, library, tool
or environment variable that is not of the layer's own toolkit (policy TOOLKITS). A test
importing torch_emu is fine; torch_core's profiler is not.

The offending call raises :class:`LayeringViolation` and is recorded (in this process,
and in the file TORCHSPLIT_LAYERING_LOG names, for processes a test starts), so a caller
that swallows the exception still fails the session.
"""

from __future__ import annotations

import dis
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from torchsplit import vendors
from torchsplit.audit.layers import Backend, Break, Layer

_THIS = str(Path(__file__).resolve())
# Standard-library plumbing between a named environment read and the code naming it
# (frozen modules since Python 3.11: "<frozen os>").
_ENV_PLUMBING = ("/os.py", "/_collections_abc.py", "<frozen os>", "<frozen _collections_abc>")
_ENV_FUNCTIONS = {"get", "getenv", "__contains__", "setdefault", "pop", "putenv", "unsetenv"}
_SUBSCRIPTS = {"BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR"}
LOG_ENV = "TORCHSPLIT_LAYERING_LOG"
GUARD_ENV = "TORCHSPLIT_LAYERING_GUARD"


class LayeringViolation(RuntimeError):
    """A layer's code coupled to another layer at run time."""


class Guard:
    def __init__(
        self,
        repo: Path,
        roots: Sequence[tuple[Path, Layer]],
        backends: Sequence[Backend],
        loaders: Sequence[str],
        log: Path | None = None,
    ) -> None:
        # Each directory both as given and resolved: under `bazel test` the files are
        # symlinks from the runfiles tree into the source tree.
        self.repos = _forms(repo)
        self.roots = sorted(
            ((form, layer) for path, layer in roots for form in _forms(path)),
            key=lambda r: -len(r[0]),  # the most specific root first
        )
        self.backends = {b.name: b for b in backends}
        self.modules = {name: b.name for b in backends for name in b.names}
        # Repository-relative suffixes: the same file is loaded from the source tree
        # or from bazel-bin (a different root, the same relative path).
        self.loader_suffixes = tuple("/" + rel.lstrip("/") for rel in loaders)
        self.log = log
        self.violations: list[str] = []
        self._resolved: dict[str, str] = {}

    # -- who is calling? ---------------------------------------------------------------
    def _paths(self, name: str) -> tuple[str, ...]:
        paths = self._resolved.get(name)
        if paths is None:
            paths = self._resolved[name] = tuple(
                dict.fromkeys((os.path.abspath(name), str(Path(name).resolve())))
            )
        return paths

    def _shown(self, path: str) -> str:
        for repo in self.repos:
            if path.startswith(repo):
                return path[len(repo) :]
        return path

    def _layer_of(self, frame: FrameType) -> tuple[str, Layer, bool] | None:
        """(shown location, layer, is a loader) of a frame in a guarded layer's file."""
        name = frame.f_code.co_filename
        if not name.startswith("/"):
            return None
        for path in self._paths(name):
            for root, layer in self.roots:
                if path.startswith(root):
                    loader = layer.kind == "core" and path.endswith(self.loader_suffixes)
                    return f"{self._shown(path)}:{frame.f_lineno}", layer, loader
        return None

    def _caller(self, frame: FrameType | None) -> tuple[str, Layer, bool] | None:
        """The innermost frame from the repository's (or bazel-bin's) files, when it is in
        a guarded layer; None when it is a test's or a tool's."""
        while frame is not None:
            name = frame.f_code.co_filename
            if name != _THIS and name.startswith("/"):
                found = self._layer_of(frame)
                if found is not None:
                    return found
                if any(p.startswith(self.repos) for p in self._paths(name)):
                    return None
            frame = frame.f_back
        return None

    # -- what is it loading? -----------------------------------------------------------
    def _module(self, module: str, layer: Layer) -> tuple[Break, str] | None:
        other = self.modules.get(module.split(".", 1)[0])
        if other:
            why = layer.backend_break(other)
            return (why, f"backend package {module.split('.', 1)[0]}") if why else None
        family = vendors.python_module_family(module)
        why = layer.vendor_break(family) if family else None
        return (why, f"{family} vendor module {module}") if why else None

    def _library(self, name: str, layer: Layer) -> tuple[Break, str] | None:
        family = vendors.library_family(name)
        why = layer.vendor_break(family) if family else None
        if why:
            return why, f"{family} vendor library {name}"
        for backend in self.backends.values():
            if "/third_device/" in name and f"/third_device/{backend.name}/" not in name:
                continue
            if backend.named_in(name) or f"/third_device/{backend.name}/" in name:
                why = layer.backend_break(backend.name)
                if why:
                    return why, f"backend library {name}"
        return None

    def _record(self, caller: str, action: str, what: str, why: Break) -> None:
        message = f"{caller} {action} {what} ({why}; tools/layering/policy.bzl)"
        self.violations.append(message)
        if self.log is not None:
            try:
                with open(self.log, "a", encoding="utf-8") as f:
                    f.write(message + "\n")
            except OSError:
                pass
        raise LayeringViolation(message)

    def _check_load(self, kind: str, name: str) -> None:
        found = self._caller(_frame(3))
        if found is None or found[2]:  # a test's or a tool's, or an allowlisted loader
            return
        caller, layer, _ = found
        hit = self._module(name, layer) if kind == "module" else self._library(name, layer)
        if hit:
            self._record(caller, "imports" if kind == "module" else "loads", hit[1], hit[0])

    def _check_command(self, command: object, how: str) -> None:
        if isinstance(command, bytes | os.PathLike):
            command = os.fsdecode(command)
        if isinstance(command, list | tuple) and command:
            command = os.fsdecode(command[0]) if isinstance(command[0], str | bytes) else ""
        if not isinstance(command, str):
            return
        tool = vendors.tool_family(command)
        if tool is None:
            return
        found = self._caller(_frame(3))
        if found is None:
            return
        caller, layer, _ = found
        why = layer.vendor_break(tool[0])
        if why:
            self._record(
                caller, f"launches ({how})", f"{tool[1]}, a {tool[0]} command-line tool", why
            )

    def check_env(self, key: object, action: str) -> None:
        """A named read or write of os.environ (see _install_environ)."""
        if isinstance(key, bytes):
            key = key.decode("ascii", "replace")
        if not isinstance(key, str):
            return
        family = vendors.env_family(key)
        if family is None:
            return
        frame = _frame(3)
        if frame is None or dis.opname[frame.f_code.co_code[frame.f_lasti]] not in _SUBSCRIPTS:
            return  # a copy or an iteration of the whole environment
        # Past the standard library's plumbing (Mapping.get, os.getenv) to the code
        # that named the variable: it must be a guarded layer's.
        while frame is not None and frame.f_code.co_filename.endswith(_ENV_PLUMBING):
            if frame.f_code.co_name not in _ENV_FUNCTIONS:
                return
            frame = frame.f_back
        if frame is None:
            return
        found = self._layer_of(frame)
        if found is None:
            return
        caller, layer, _ = found
        why = layer.vendor_break(family)
        if why:
            self._record(caller, action, f"{key}, a {family} environment variable", why)

    # -- hooks -------------------------------------------------------------------------
    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        self._check_load("module", fullname)
        return None  # never finds anything itself

    def audit(self, event: str, args: tuple[object, ...]) -> None:
        if event == "import" and args and isinstance(args[0], str):
            self._check_load("module", args[0])
        elif event == "ctypes.dlopen" and args and isinstance(args[0], str):
            self._check_load("library", args[0])
        elif event == "subprocess.Popen" and len(args) > 1:
            self._check_command(args[0] if args[0] else args[1], "subprocess")
        elif event == "os.system" and args:
            self._check_command(args[0], "os.system")
        elif event in ("os.exec", "os.posix_spawn") and args:
            self._check_command(args[0], event)
        elif event == "os.spawn" and len(args) > 1:
            self._check_command(args[1], event)


def _frame(depth: int) -> FrameType | None:
    """The caller ``depth`` frames up from the function calling this, or None: an audit
    event raised at start-up (python -m) can come with no Python frame at all."""
    try:
        return sys._getframe(depth)
    except ValueError:
        return None


def _forms(path: Path) -> tuple[str, ...]:
    """A directory as given (absolute) and resolved, each ending in "/"."""
    return tuple(dict.fromkeys((os.path.abspath(path) + "/", str(path.resolve()) + "/")))


def _install_environ(guard: Guard) -> None:
    """Wrap os._Environ's item access: os.environ and os.environb, every read by name."""
    environ = type(os.environ)
    get, put = environ.__getitem__, environ.__setitem__

    def __getitem__(self, key):  # type: ignore[no-untyped-def]
        guard.check_env(key, "reads")
        return get(self, key)

    def __setitem__(self, key, value):  # type: ignore[no-untyped-def]
        guard.check_env(key, "sets")
        return put(self, key, value)

    environ.__getitem__ = __getitem__  # type: ignore[method-assign]
    environ.__setitem__ = __setitem__  # type: ignore[method-assign]


def install(
    repo: Path,
    roots: Sequence[tuple[Path, Layer]],
    backends: Sequence[Backend],
    loaders: Sequence[str],
    log: Path | None = None,
) -> Guard:
    """Installs the guard for the rest of the process (audit hooks cannot be removed)."""
    guard = Guard(repo, roots, backends, loaders, log)
    sys.meta_path.insert(0, guard)  # type: ignore[arg-type]
    sys.addaudithook(guard.audit)
    _install_environ(guard)
    return guard


# Checkout -> its installed guard: one guard per checkout and process, whoever asks
# (the start-up hook, then conftest.py).
_INSTALLED: dict[str, Guard] = {}


def install_for_checkout(repo: Path, bazel_bin: Path | None = None) -> Guard:
    """The guard for a checkout: its policy, core and every backend, in the source tree and
    in bazel-bin (where the extensions are); violations also go to $TORCHSPLIT_LAYERING_LOG."""
    from torchsplit.audit.layers import Layers
    from torchsplit.audit.policy import load_policy

    key = str(repo.resolve())
    if key in _INSTALLED:
        return _INSTALLED[key]

    policy = load_policy(repo / "tools" / "layering" / "policy.bzl")
    tops = [p.name for p in repo.iterdir() if p.is_dir() and not p.name.startswith(".")]
    layers = Layers.of(repo, policy, [t for t in tops if policy.layer_of("", t) == "core"])
    bases = [repo, bazel_bin if bazel_bin is not None else repo / "bazel-bin"]
    roots = [(base / top, layer) for top, layer in layers.roots() for base in bases]
    log = os.environ.get(LOG_ENV)
    guard = install(
        repo,
        roots,
        list(layers.backends.values()),
        policy.dynamic_loaders,
        Path(log) if log else None,
    )
    _INSTALLED[key] = guard
    return guard
