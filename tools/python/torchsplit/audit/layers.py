"""Who is who for the file checks and the run-time guard: core, every backend (any
directory under third_device/, never a fixed list), the names each backend goes by,
the vendor families its toolkit grants (policy TOOLKITS), and which rule and layer
pair a coupling breaks.

Every check words its findings the same way: the file and line, then the layer pair
("core -> torch_cuda", "torch_emu -> cuda toolkit") and the rule ("core-to-backend",
"backend-to-backend", "core-to-toolkit", or "TOOLKITS" for a backend reaching a vendor
that is not its own).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from torchsplit.audit.policy import Policy


@dataclass(frozen=True)
class Break:
    """The rule a coupling breaks and the layer pair it couples."""

    rule: str
    pair: str

    def __str__(self) -> str:
        return f"{self.pair}, rule {self.rule}"


@dataclass(frozen=True)
class Backend:
    """A directory under third_device/ and the names its code, packages and artifacts use."""

    name: str
    packages: tuple[str, ...] = ()  # Python packages: third_device/<name>/<pkg>/__init__.py
    extensions: tuple[str, ...] = ()  # device_backend(extension = ...) in its BUILD file

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.name, *self.packages, *self.extensions)))

    @property
    def mangled(self) -> str:
        """Its package as Bazel spells it in solib names (third_device/x_y: third_Udevice_Sx_Uy)."""
        return f"third_device/{self.name}".replace("_", "_U").replace("/", "_S")

    @cached_property
    def _pattern(self) -> re.Pattern[str]:
        names = "|".join(re.escape(n) for n in sorted(self.names, key=len, reverse=True))
        return re.compile(
            rf"{re.escape(self.mangled)}|(?<![A-Za-z0-9])(?:lib)?({names})(?![A-Za-z0-9])|"
            rf"lib({names})"
        )

    def named_in(self, text: str) -> str | None:
        """The name of this backend that ``text`` contains as a word ("_EMUC.so",
        "libtorch_emu.so", "torch_emu/__init__.py"), or None."""
        m = self._pattern.search(text)
        if m is None:
            return None
        return m.group(1) or m.group(2) or self.mangled


@dataclass(frozen=True)
class Layer:
    """A guarded layer: core, or one backend with the vendor families of its toolkit."""

    name: str  # "core", or the backend's directory name
    kind: str  # "core" or "backend"
    vendors: tuple[str, ...] = ()
    root: str = ""  # workspace-relative directory ("core", "third_device/torch_cuda")

    def vendor_break(self, family: str) -> Break | None:
        """Naming vendor ``family`` (its library, tool, variable, module): allowed only to a
        backend whose toolkit it is."""
        if family in self.vendors:
            return None
        if self.kind == "core":
            return Break("core-to-toolkit", f"core -> {family} toolkit")
        return Break("TOOLKITS", f"{self.name} -> {family} toolkit (not its own)")

    def backend_break(self, other: str) -> Break | None:
        """Naming backend ``other``: never allowed, except a backend naming itself."""
        if self.kind == "backend" and other == self.name:
            return None
        if self.kind == "core":
            return Break("core-to-backend", f"core -> {other}")
        return Break("backend-to-backend", f"{self.name} -> {other}")


def _extensions(build: Path) -> tuple[str, ...]:
    """The extension names a backend's BUILD file gives device_backend() (ast, no Bazel)."""
    try:
        tree = ast.parse(build.read_text(encoding="utf-8"), str(build))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return ()
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "extension":
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                out.append(node.value.value)
    return tuple(out)


def discover_backends(root: Path) -> dict[str, Backend]:
    """Every directory under third_device/, with its Python packages and extensions."""
    out: dict[str, Backend] = {}
    base = root / "third_device"
    if not base.is_dir():
        return out
    for directory in sorted(p for p in base.iterdir() if p.is_dir()):
        if directory.name.startswith("."):
            continue
        packages = tuple(sorted(i.parent.name for i in directory.glob("*/__init__.py")))
        build = next(
            (directory / n for n in ("BUILD.bazel", "BUILD") if (directory / n).exists()), None
        )
        extensions = _extensions(build) if build else ()
        out[directory.name] = Backend(directory.name, packages, extensions)
    return out


@dataclass
class Layers:
    """The guarded layers of one checkout, found from the policy and the file system."""

    policy: Policy
    backends: dict[str, Backend]
    core_roots: tuple[str, ...]
    packages: frozenset[str] = frozenset()
    _by_module: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, root: Path, policy: Policy, packages: list[str]) -> Layers:
        core = sorted(
            {
                p.split("/")[0]
                for p in packages
                if policy.layer_of("", p) == "core" and not policy.is_exempt("", p)
            }
        )
        layers = cls(policy, discover_backends(root), tuple(core), frozenset(packages))
        for backend in layers.backends.values():
            for name in backend.names:
                layers._by_module.setdefault(name, backend.name)
        return layers

    def layer(self, rel: str) -> Layer | None:
        """The layer a workspace-relative file belongs to, None outside core and backends."""
        top = rel.split("/", 1)[0]
        if top in self.core_roots:
            if self.exempt(rel):
                return None
            return Layer("core", "core", (), top)
        parts = rel.split("/")
        if top == "third_device" and len(parts) > 2 and parts[1] in self.backends:
            name = parts[1]
            vendors = self.policy.vendors_of("backend", name)
            return Layer(name, "backend", vendors, f"third_device/{name}")
        return None

    def exempt(self, rel: str) -> bool:
        """Whether the file ``rel`` (workspace-relative) sits in a package the policy exempts,
        as //c10/test/... is inside core's //c10/...: its package is the deepest known package
        above it; with none known, any exempt directory above it."""
        ancestors = rel.split("/")[:-1]
        dirs = ["/".join(ancestors[:n]) for n in range(len(ancestors), 0, -1)]
        for d in dirs:
            if d in self.packages:
                return self.policy.is_exempt("", d)
        return any(self.policy.is_exempt("", d) for d in dirs)

    def roots(self) -> list[tuple[str, Layer]]:
        """(workspace-relative directory, layer) for core's roots and every backend."""
        out: list[tuple[str, Layer]] = []
        for top in self.core_roots:
            out.append((top, Layer("core", "core", (), top)))
        for name in self.backends:
            rel = f"third_device/{name}"
            out.append((rel, Layer(name, "backend", self.policy.vendors_of("backend", name), rel)))
        return out

    def backend_of_module(self, module: str) -> str | None:
        """The backend an importable module (top-level name) belongs to."""
        return self._by_module.get(module.split(".", 1)[0])

    def backends_named_in(self, text: str, but: str | None = None) -> list[tuple[str, str]]:
        """(backend, name) for each backend other than ``but`` that ``text`` names."""
        out = []
        for backend in self.backends.values():
            if backend.name == but:
                continue
            name = backend.named_in(text)
            if name:
                out.append((backend.name, name))
        return out
