"""The layering policy (``tools/layering/policy.bzl``) read from Python.

The file is evaluated by starlark-pyo3, never ``exec``ed. Pattern semantics are
those of ``tools/layering/rules.bzl`` (the aspect's); tests/layering checks the
two matchers agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import starlark as sl

from torchsplit.errors import TorchsplitError

DEFAULT_POLICY = "tools/layering/policy.bzl"
Bindings = dict[str, str]


@dataclass(frozen=True)
class Pattern:
    """A package pattern: ``//a/{b}/...`` or ``@repo//a/...``."""

    text: str
    repo: str
    parts: tuple[str, ...]
    recursive: bool

    @classmethod
    def parse(cls, text: str) -> Pattern:
        rest = text
        repo = ""
        if rest.startswith("@"):
            repo, sep, rest = rest[1:].partition("//")
            if not sep:
                raise TorchsplitError(f"layering policy: pattern {text!r} lacks '//'")
        elif rest.startswith("//"):
            rest = rest[2:]
        else:
            raise TorchsplitError(
                f"layering policy: pattern {text!r} must start with // or @repo//"
            )
        recursive = rest == "..." or rest.endswith("/...")
        if recursive:
            rest = rest[: -len("...")].rstrip("/")
        return cls(text, repo, tuple(rest.split("/")) if rest else (), recursive)

    @property
    def placeholders(self) -> list[str]:
        return [p[1:-1] for p in self.parts if _is_placeholder(p)]

    def match(self, repo: str, package: str, bindings: Bindings | None = None) -> Bindings | None:
        """Bindings extended by this pattern, or None (same rules as rules.bzl's match_package)."""
        if repo != self.repo:
            return None
        got = package.split("/") if package else []
        if len(got) < len(self.parts) or (not self.recursive and len(got) != len(self.parts)):
            return None
        out = dict(bindings or {})
        for want, have in zip(self.parts, got, strict=False):
            if _is_placeholder(want):
                name = want[1:-1]
                if name in out:
                    if out[name] != have:
                        return None
                elif have in out.values():
                    return None
                else:
                    out[name] = have
            elif want != have:
                return None
        return out

    def substitute(self, bindings: Bindings) -> str:
        text = self.text
        for name, value in bindings.items():
            text = text.replace("{" + name + "}", value)
        return text


def _is_placeholder(part: str) -> bool:
    return part.startswith("{") and part.endswith("}")


@dataclass(frozen=True)
class Rule:
    name: str
    source: Pattern
    target: Pattern
    why: str


@dataclass(frozen=True)
class Toolkit:
    """A backend's own toolkit (policy TOOLKITS)."""

    repositories: tuple[str, ...] = ()
    vendors: tuple[str, ...] = ()


class Derived(NamedTuple):
    """A derived backend's parent and translation rule kinds (policy DERIVED_BACKENDS).

    A tuple, so that callers may unpack it: ``parent, via = policy.derived[name]``.
    """

    parent: str
    via: tuple[str, ...]


@dataclass
class Policy:
    path: str
    layers: list[tuple[str, Pattern]] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    exempt: list[Pattern] = field(default_factory=list)
    backend_visibility: list[str] = field(default_factory=list)
    # The positive policy: layer -> external repositories it may reach; each
    # backend's own toolkit; derived backends; the DT_NEEDED (and -l) allowlist
    # of core's artifacts; core's run-time loader files; device source suffixes.
    repositories: dict[str, list[str]] = field(default_factory=dict)
    toolkits: dict[str, Toolkit] = field(default_factory=dict)
    derived: dict[str, Derived] = field(default_factory=dict)
    core_needed: list[str] = field(default_factory=list)
    dynamic_loaders: list[str] = field(default_factory=list)
    device_suffixes: list[str] = field(default_factory=list)
    # Includes a layer already has and a migration has not removed yet: (file, include)
    # -> why. The audit reports them as known, not as violations; any other fails.
    known_includes: dict[tuple[str, str], str] = field(default_factory=dict)

    def is_exempt(self, repo: str, package: str) -> bool:
        return any(p.match(repo, package) is not None for p in self.exempt)

    def layer_of(self, repo: str, package: str) -> str:
        for name, pattern in self.layers:
            if pattern.match(repo, package) is not None:
                return name
        return ""

    def backend_of(self, package: str) -> str | None:
        """third_device/<backend>/... -> <backend> (rules.bzl's backend_of)."""
        if self.layer_of("", package) != "backend":
            return None
        return package.split("/")[1]

    def allowed_repositories(self, package: str) -> list[str] | None:
        """The external repositories a main-repository package may reach (rules.bzl's)."""
        if self.is_exempt("", package):
            return None
        layer = self.layer_of("", package)
        allowed = self.repositories.get(layer)
        backend = self.backend_of(package)
        if allowed is None or backend is None:
            return allowed
        return allowed + list(self.toolkit(backend).repositories)

    def toolkit(self, backend: str) -> Toolkit:
        return self.toolkits.get(backend, Toolkit())

    def toolkit_visibility(self, repository: str) -> list[str]:
        """rules.bzl's toolkit_visibility: what WORKSPACE must pass for a toolkit repository."""
        return [
            f"@//third_device/{backend}:__subpackages__"
            for backend in sorted(self.toolkits)
            if repository in self.toolkits[backend].repositories
        ]

    def vendors_of(self, layer: str, backend: str | None) -> tuple[str, ...]:
        """The vendor families a layer's code may name: a backend's own toolkit's; core none."""
        return self.toolkit(backend).vendors if layer == "backend" and backend else ()


def _strings(value: object, what: str, path: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TorchsplitError(f"{what} must be a list of strings", path)
    return list(value)


def _optional(module: sl.Module, name: str, default: object) -> object:
    # starlark-pyo3 answers None (not KeyError) for a name the module does not define.
    try:
        value = module[name]
    except KeyError:
        return default
    return default if value is None else value


def load_policy(path: str | Path) -> Policy:
    """Evaluate policy.bzl (plain data) and check its shape."""
    where = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise TorchsplitError("layering policy not found", where) from exc
    return parse_policy(text, where)


def parse_policy(text: str, where: str = DEFAULT_POLICY) -> Policy:
    """:func:`load_policy` on a policy's text (e.g. an edit not yet written); `where` names it."""
    module = sl.Module()
    try:
        ast = sl.parse(where, text, sl.Dialect.extended())
        sl.eval(module, ast, sl.Globals.standard())
        raw = {name: module[name] for name in ("LAYERS", "FORBIDDEN", "EXEMPT")}
        backend_visibility = module["BACKEND_VISIBILITY"]
        positive = {
            n: _optional(module, n, default)
            for n, default in (
                ("REPOSITORIES", {}),
                ("TOOLKITS", {}),
                ("DERIVED_BACKENDS", {}),
                ("CORE_NEEDED", []),
                ("DYNAMIC_LOADERS", []),
                ("DEVICE_SOURCE_SUFFIXES", []),
                ("KNOWN_INCLUDES", []),
            )
        }
    except (sl.StarlarkError, KeyError) as exc:
        raise TorchsplitError(f"cannot evaluate the layering policy: {exc}", where) from exc
    policy = Policy(path=where)
    for name in ("REPOSITORIES", "TOOLKITS", "DERIVED_BACKENDS"):
        if not isinstance(positive[name], dict):
            raise TorchsplitError(f"{name} must be a dict", where)
    policy.repositories = {
        str(k): _strings(v, f"REPOSITORIES[{k!r}]", where)
        for k, v in positive["REPOSITORIES"].items()
    }
    for backend, entry in positive["TOOLKITS"].items():
        if not isinstance(entry, dict) or set(entry) - {"repositories", "vendors"}:
            raise TorchsplitError(
                f"TOOLKITS[{backend!r}] must be a dict with repositories and vendors", where
            )
        policy.toolkits[str(backend)] = Toolkit(
            tuple(_strings(entry.get("repositories", []), f"TOOLKITS[{backend!r}]", where)),
            tuple(_strings(entry.get("vendors", []), f"TOOLKITS[{backend!r}]", where)),
        )
    for backend, entry in positive["DERIVED_BACKENDS"].items():
        if not isinstance(entry, dict) or {"from", "via"} - set(entry):
            raise TorchsplitError(
                f"DERIVED_BACKENDS[{backend!r}] needs from (a backend) and via (rule kinds)",
                where,
            )
        policy.derived[str(backend)] = Derived(
            str(entry["from"]),
            tuple(_strings(entry["via"], f"DERIVED_BACKENDS[{backend!r}]['via']", where)),
        )
    policy.core_needed = _strings(positive["CORE_NEEDED"], "CORE_NEEDED", where)
    policy.dynamic_loaders = _strings(positive["DYNAMIC_LOADERS"], "DYNAMIC_LOADERS", where)
    policy.device_suffixes = _strings(
        positive["DEVICE_SOURCE_SUFFIXES"], "DEVICE_SOURCE_SUFFIXES", where
    )
    for entry in positive["KNOWN_INCLUDES"]:
        if not isinstance(entry, dict) or {"file", "include", "why"} - set(entry):
            raise TorchsplitError("each KNOWN_INCLUDES entry needs file, include and why", where)
        policy.known_includes[(str(entry["file"]), str(entry["include"]))] = str(entry["why"])
    for entry in raw["LAYERS"]:
        name, pattern = _strings(entry, "each LAYERS entry ([name, pattern])", where)
        policy.layers.append((name, Pattern.parse(pattern)))
    for entry in raw["FORBIDDEN"]:
        if not isinstance(entry, dict) or {"name", "from", "to", "why"} - set(entry):
            raise TorchsplitError("each FORBIDDEN entry needs name, from, to and why", where)
        policy.rules.append(
            Rule(
                name=str(entry["name"]),
                source=Pattern.parse(str(entry["from"])),
                target=Pattern.parse(str(entry["to"])),
                why=str(entry["why"]),
            )
        )
    policy.exempt = [Pattern.parse(p) for p in _strings(raw["EXEMPT"], "EXEMPT", where)]
    policy.backend_visibility = _strings(backend_visibility, "BACKEND_VISIBILITY", where)
    return policy


def visibility_label(pattern: str, bindings: Bindings | None = None) -> str:
    """A policy pattern as a visibility label (rules.bzl's visibility_of)."""
    text = Pattern.parse(pattern).substitute(bindings or {}) if "{" in pattern else pattern
    if "{" in text:
        raise TorchsplitError(f"layering policy: unbound placeholder in {pattern!r}")
    if text.endswith("//..."):
        return text[: -len("...")] + ":__subpackages__"
    if text.endswith("/..."):
        return text[: -len("/...")] + ":__subpackages__"
    return text + ":__pkg__"


@dataclass(frozen=True)
class Pair:
    """One instance of a rule: targets in ``source`` must not reach ``target``."""

    rule: Rule
    source: str  # a query expression (pattern minus exempt packages)
    target: str  # the to-side's package pattern (its rules: what visible() checks)
    source_packages: tuple[str, ...]
    bindings: tuple[tuple[str, str], ...]
    # What somepath() looks for: the to-side's rules *and files* (a source file
    # of a backend named in srcs is an edge too), minus, for a derived backend
    # and its parent, the parent's source files only its translation rules read.
    reach: str = ""


def expand(policy: Policy, packages: list[str]) -> list[Pair]:
    """Every (from, to) pair the rules give for the main repository's packages.

    Placeholders range over the packages that exist: a new backend directory
    gives new pairs with no policy edit.
    """
    pairs: list[Pair] = []
    for rule in policy.rules:
        if rule.source.repo:
            raise TorchsplitError(
                f"rule {rule.name}: a 'from' pattern in another repository is not supported",
                policy.path,
            )
        by_binding: dict[tuple[tuple[str, str], ...], list[str]] = {}
        for package in packages:
            if policy.is_exempt("", package):
                continue
            bound = rule.source.match("", package)
            if bound is not None:
                by_binding.setdefault(tuple(sorted(bound.items())), []).append(package)
        for key, source_packages in sorted(by_binding.items()):
            bound = dict(key)
            source = rule.source.substitute(bound)
            exempt = [
                p.text
                for p in policy.exempt
                if any(p.match("", q) is not None for q in packages)
                and Pattern.parse(source).match(p.repo, "/".join(p.parts)) is not None
            ]
            source_expr = " - ".join([source, *exempt])
            for target in _targets(rule, bound, packages):
                reach = _reach(policy, source, target)
                pairs.append(Pair(rule, source_expr, target, tuple(source_packages), key, reach))
    return pairs


def _reach(policy: Policy, source: str, target: str) -> str:
    """The query set a pair's somepath() looks for (see Pair.reach)."""
    pattern = Pattern.parse(target)
    if pattern.repo or not pattern.recursive:
        return target
    everything = f"{target}:*"
    from_backend = policy.backend_of("/".join(Pattern.parse(source).parts))
    derived = policy.derived.get(from_backend or "")
    if derived is None or policy.backend_of("/".join(pattern.parts)) != derived.parent:
        return everything
    kinds = "|".join(re.escape(k) for k in derived.via)
    mine = f"{source}:*"
    translation = f"kind('^({kinds}) rule$', {mine})"
    read = f"kind('source file', {everything}) ^ deps({translation}, 1)"
    only_translated = f"({read}) - deps({mine} - {translation}, 1)"
    return f"{everything} - ({only_translated})"


def _targets(rule: Rule, bound: Bindings, packages: list[str]) -> list[str]:
    free = [p for p in rule.target.placeholders if p not in bound]
    if not free:
        return [rule.target.substitute(bound)]
    if rule.target.repo:
        raise TorchsplitError(f"rule {rule.name}: placeholders in another repository's pattern")
    values: set[str] = set()
    for package in packages:
        more = rule.target.match("", package, bound)
        if more is not None:
            values.add(rule.target.substitute(more))
    return sorted(values)
