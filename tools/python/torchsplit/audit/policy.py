"""The layering policy (``tools/layering/policy.bzl``) read from Python.

The file is evaluated by starlark-pyo3, never ``exec``ed. Pattern semantics are
those of ``tools/layering/rules.bzl`` (the aspect's); tests/layering checks the
two matchers agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

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


@dataclass
class Policy:
    path: str
    layers: list[tuple[str, Pattern]] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    exempt: list[Pattern] = field(default_factory=list)
    backend_visibility: list[str] = field(default_factory=list)
    toolkit_visibility: list[str] = field(default_factory=list)
    # The positive policy: layer -> external repositories it may reach; the
    # DT_NEEDED allowlist of core's artifacts; core's run-time loader files.
    repositories: dict[str, list[str]] = field(default_factory=dict)
    core_needed: list[str] = field(default_factory=list)
    dynamic_loaders: list[str] = field(default_factory=list)
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
    module = sl.Module()
    try:
        ast = sl.parse(where, text, sl.Dialect.extended())
        sl.eval(module, ast, sl.Globals.standard())
        raw = {name: module[name] for name in ("LAYERS", "FORBIDDEN", "EXEMPT")}
        raw_vis = {n: module[n] for n in ("BACKEND_VISIBILITY", "TOOLKIT_VISIBILITY")}
        positive = {
            n: _optional(module, n, default)
            for n, default in (
                ("REPOSITORIES", {}),
                ("CORE_NEEDED", []),
                ("DYNAMIC_LOADERS", []),
                ("KNOWN_INCLUDES", []),
            )
        }
    except (sl.StarlarkError, KeyError) as exc:
        raise TorchsplitError(f"cannot evaluate the layering policy: {exc}", where) from exc
    policy = Policy(path=where)
    if not isinstance(positive["REPOSITORIES"], dict):
        raise TorchsplitError("REPOSITORIES must be a dict layer -> list of repositories", where)
    policy.repositories = {
        str(k): _strings(v, f"REPOSITORIES[{k!r}]", where)
        for k, v in positive["REPOSITORIES"].items()
    }
    policy.core_needed = _strings(positive["CORE_NEEDED"], "CORE_NEEDED", where)
    policy.dynamic_loaders = _strings(positive["DYNAMIC_LOADERS"], "DYNAMIC_LOADERS", where)
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
    policy.backend_visibility = _strings(raw_vis["BACKEND_VISIBILITY"], "BACKEND_VISIBILITY", where)
    policy.toolkit_visibility = _strings(raw_vis["TOOLKIT_VISIBILITY"], "TOOLKIT_VISIBILITY", where)
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
    target: str
    source_packages: tuple[str, ...]
    bindings: tuple[tuple[str, str], ...]


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
                pairs.append(Pair(rule, source_expr, target, tuple(source_packages), key))
    return pairs


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
