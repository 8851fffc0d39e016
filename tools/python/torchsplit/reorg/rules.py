"""Classification rules: a TOML file of named targets and ordered, named rules.

Schema (see ``data/upstream_pytorch.toml`` for the default, documented in place)::

    name = "upstream-pytorch"

    [detect]
    data_lists = ["libtorch_nvfuser_runtime_sources"]  # files a generator reads: `data`
    cuda_tokens = '^(cuda\\w*|cudnn|nccl|...)$'  # regex on lower-cased words of a path/list
    cuda_suffixes = [".cu", ".cuh"]

    [targets.core]                 # key used by rules
    label = "//core:torch_cpu"     # Bazel label of the destination
    variable = "torch_cpu_sources" # list name in the emitted .bzl
    kind = "cc_library"            # cc_library | cuda_library | cc_binary | excluded
    deps = []                      # other target keys
    extension = "_C"               # also emit a pybind_extension of this name linking it
    directory = "framework"        # its files move under csrc/<directory>/ (default: name)

    [[library]]                    # upstream's libraries, for the before/after table
    name = "libtorch_cuda"         # first library one of whose list globs matches a
    lists = ["libtorch_cuda_*"]    # source's lists wins

    [[glob]]                       # a glob upstream uses instead of listing files
    pattern = "c10/cuda/**"        # expanded over --source-tree / --file-list
    exclude = ["**/test/**"]

    [inputs]                       # more build_variables files, merged into the main one
    build_variables = ["third_device/*/build_variables.bzl"]  # globs beside the main file

    [[target_pattern]]             # targets made on demand, from a rule's list_regex groups
    key = "{backend}_{module}"
    label = "//third_device/{backend}:{module}"
    variable = "{backend}_{module}_sources"
    deps = ["core"]

    [[rule]]                       # first match wins
    name = "cuda-distributed"
    why = "text shown to reviewers"
    target = "cuda_distributed"    # target key; may use {group}s from list_regex
    cuda = true                    # the source looks CUDA (by list, name or suffix)
    cuda_list = false              # the list name itself looks CUDA (true) or not (false)
    list = ["*distributed*"]       # fnmatch on the list name (any)
    list_regex = '^torch_(?P<backend>\\w+)_...$'  # regex on the list name; groups feed target
    path = ['^torch/csrc/distributed/']           # regex searched in the source path (any)
    not_path = ['...']             # none of these may match
    suffix = [".cu"]               # the source ends with one of these
    fallback = true                # marks a catch-all: lists reaching it are flagged
    flag = "defines-main"          # flag every source this rule decides (why = the reason)

A rule whose target is ``"@core"`` keeps the source out of every device target: the
first later rule without a ``cuda`` condition then picks the core target.

A rule matches a (list, source) pair when every condition it has holds.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from torchsplit.errors import TorchsplitError
from torchsplit.globs import glob_to_regex

DEFAULT_RULES = "upstream_pytorch.toml"
_KINDS = ("cc_library", "cuda_library", "cc_binary", "excluded")
STAY_IN_CORE = "@core"
_RULE_KEYS = {
    "name",
    "why",
    "target",
    "cuda",
    "cuda_list",
    "list",
    "list_regex",
    "path",
    "not_path",
    "suffix",
    "fallback",
    "flag",
}
_TOKEN_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def tokens(text: str) -> list[str]:
    """Lower-cased words of a path or list name: split on punctuation and camelCase.

    ``CUDAHooksInterface.cpp`` -> cuda, hooks, interface, cpp; ``reducer_cuda`` -> reducer,
    cuda; ``NCCLUtils`` -> nccl, utils. Whole segments are kept too (``cusparselt``).
    """
    words: list[str] = []
    for part in _TOKEN_SPLIT.split(text):
        if not part:
            continue
        words.append(part.lower())
        pieces = _CAMEL.findall(part)
        if len(pieces) > 1:
            words.extend(p.lower() for p in pieces)
    return words


@dataclass(frozen=True)
class Target:
    key: str
    label: str
    variable: str
    kind: str = "cc_library"
    deps: tuple[str, ...] = ()
    extension: str = ""
    directory: str = ""  # csrc/<directory>/ its files move to (default: the target's name)

    @property
    def module(self) -> str:
        return self.directory or self.name

    @property
    def package(self) -> str:
        return self.label[2:].split(":", 1)[0]

    @property
    def name(self) -> str:
        return self.label.split(":", 1)[1]


@dataclass(frozen=True)
class Rule:
    name: str
    target: str
    why: str = ""
    cuda: bool | None = None
    cuda_list: bool | None = None
    lists: tuple[str, ...] = ()
    list_regex: re.Pattern[str] | None = None
    paths: tuple[re.Pattern[str], ...] = ()
    not_paths: tuple[re.Pattern[str], ...] = ()
    suffixes: tuple[str, ...] = ()
    fallback: bool = False
    flag: str = ""


@dataclass(frozen=True)
class Library:
    """One of upstream's libraries, named by the lists it is built from."""

    name: str
    lists: tuple[str, ...]


@dataclass(frozen=True)
class Glob:
    """A file pattern upstream globs instead of listing (``**`` spans directories)."""

    pattern: str
    exclude: tuple[str, ...] = ()

    @property
    def list_name(self) -> str:
        return f"glob({self.pattern})"

    def matches(self, path: str) -> bool:
        return bool(glob_to_regex(self.pattern).fullmatch(path)) and not any(
            glob_to_regex(p).fullmatch(path) for p in self.exclude
        )


@dataclass(frozen=True)
class TargetPattern:
    """A [[target_pattern]]: ``key``, ``label``, ``variable`` templates over a rule's groups."""

    key: str
    label: str
    variable: str
    kind: str = "cc_library"
    deps: tuple[str, ...] = ()


@dataclass
class RuleSet:
    name: str
    source: str
    cuda_tokens: re.Pattern[str]
    cuda_suffixes: tuple[str, ...]
    targets: dict[str, Target] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)
    target_patterns: list[TargetPattern] = field(default_factory=list)
    extra_inputs: tuple[str, ...] = ()
    header_suffixes: tuple[str, ...] = (".h", ".hh", ".hpp", ".cuh")
    generated: tuple[re.Pattern[str], ...] = ()
    data_lists: tuple[str, ...] = ()  # fnmatch: lists of files a code generator reads
    libraries: list[Library] = field(default_factory=list)
    globs: list[Glob] = field(default_factory=list)
    glob_suffixes: tuple[str, ...] = (".c", ".cc", ".cpp", ".cu", ".h", ".cuh", ".hpp")

    def instantiate(self, key: str, groups: dict[str, str]) -> Target | None:
        """The target ``key`` made from the first pattern whose key template yields it."""
        for pattern in self.target_patterns:
            try:
                if pattern.key.format_map(groups) != key:
                    continue
                target = Target(
                    key,
                    pattern.label.format_map(groups),
                    pattern.variable.format_map(groups),
                    pattern.kind,
                    pattern.deps,
                )
            except KeyError:
                continue
            self.targets[key] = target
            return target
        return None

    def input_files(self, main: str | Path) -> list[Path]:
        """The ``[inputs] build_variables`` globs, expanded beside ``main``, sorted."""
        base = Path(main).resolve().parent
        found: set[Path] = set()
        for pattern in self.extra_inputs:
            found.update(p for p in base.glob(pattern) if p.is_file())
        return sorted(found)

    def role(self, source: str, lists: list[str] | tuple[str, ...] = ()) -> str:
        """``generated`` (Buck label, build-directory path), ``bare`` (a file name with no
        directory, computed by the file), ``data`` (in a ``data_lists`` list: read by a
        code generator, never compiled), ``header`` or ``source``."""
        if any(p.search(source) for p in self.generated):
            return "generated"
        if "/" not in source:
            return "bare"
        if lists and all(any(fnmatch.fnmatchcase(n, p) for p in self.data_lists) for n in lists):
            return "data"
        if source.endswith(self.header_suffixes):
            return "header"
        return "source"

    def library_of(self, lists: list[str] | tuple[str, ...]) -> str:
        for library in self.libraries:
            if any(fnmatch.fnmatchcase(n, p) for n in lists for p in library.lists):
                return library.name
        return "(no library)"

    def cuda_words(self, text: str) -> list[str]:
        return sorted({w for w in tokens(text) if self.cuda_tokens.fullmatch(w)})

    def list_is_cuda(self, list_name: str) -> bool:
        return bool(self.cuda_words(list_name))

    def name_is_cuda(self, source: str) -> str | None:
        """Why ``source`` looks CUDA by its own path, or None."""
        for suffix in self.cuda_suffixes:
            if source.endswith(suffix):
                return f"suffix {suffix}"
        words = self.cuda_words(source)
        if words:
            return "name word " + "/".join(words)
        return None

    def target_by_label(self, label: str) -> Target | None:
        for target in self.targets.values():
            if target.label == label:
                return target
        return None


def _str_list(value: Any, what: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise TorchsplitError(f"{what} must be a string or a list of strings", path=where)


def _compile(pattern: str, what: str, where: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise TorchsplitError(f"{what}: invalid regex {pattern!r}: {exc}", path=where) from exc


def parse_rules(data: dict[str, Any], where: str) -> RuleSet:
    """Build a RuleSet from parsed TOML ``data``; ``where`` names the file in errors."""
    detect = data.get("detect", {})
    if not isinstance(detect, dict):
        raise TorchsplitError("[detect] must be a table", path=where)
    ruleset = RuleSet(
        name=str(data.get("name", Path(where).stem)),
        source=where,
        cuda_tokens=_compile(detect.get("cuda_tokens", r"^cuda\w*$"), "detect.cuda_tokens", where),
        cuda_suffixes=_str_list(detect.get("cuda_suffixes", [".cu", ".cuh"]), "suffixes", where),
    )
    targets = data.get("targets")
    if not isinstance(targets, dict) or not targets:
        raise TorchsplitError("expected a [targets.<key>] table with at least one target", where)
    for key, spec in targets.items():
        if not isinstance(spec, dict) or "label" not in spec:
            raise TorchsplitError(f'[targets.{key}] needs label = "//pkg:name"', path=where)
        label = spec["label"]
        if not isinstance(label, str) or not re.fullmatch(r"//[\w/.-]*:[\w.+-]+", label):
            raise TorchsplitError(f"[targets.{key}] label {label!r} is not //pkg:name", where)
        kind = spec.get("kind", "cc_library")
        if kind not in _KINDS:
            raise TorchsplitError(f"[targets.{key}] kind must be one of {_KINDS}", path=where)
        default_var = re.sub(r"\W", "_", label[2:].split("/")[-1].replace(":", "_")) + "_sources"
        variable = spec.get("variable", default_var)
        if not re.fullmatch(r"[A-Za-z_]\w*", str(variable)):
            raise TorchsplitError(f"[targets.{key}] variable {variable!r} is no identifier", where)
        deps = _str_list(spec.get("deps", []), f"[targets.{key}] deps", where)
        extension = str(spec.get("extension", ""))
        directory = str(spec.get("directory", ""))
        if directory and not re.fullmatch(r"[\w.-]+", directory):
            raise TorchsplitError(f"[targets.{key}] directory {directory!r} is no name", where)
        ruleset.targets[key] = Target(key, label, str(variable), kind, deps, extension, directory)
    for key, target in ruleset.targets.items():
        for dep in target.deps:
            if dep not in ruleset.targets:
                raise TorchsplitError(f"[targets.{key}] depends on unknown target {dep!r}", where)
    variables = [t.variable for t in ruleset.targets.values()]
    if len(set(variables)) != len(variables):
        raise TorchsplitError("two targets share one variable name", path=where)

    inputs = data.get("inputs", {})
    if not isinstance(inputs, dict):
        raise TorchsplitError("[inputs] must be a table", path=where)
    ruleset.extra_inputs = _str_list(
        inputs.get("build_variables", []), "[inputs] build_variables", where
    )
    raw_patterns = data.get("target_pattern", [])
    if not isinstance(raw_patterns, list):
        raise TorchsplitError("[[target_pattern]] must be an array of tables", path=where)
    for index, spec in enumerate(raw_patterns, start=1):
        if not isinstance(spec, dict) or not all(
            isinstance(spec.get(k), str) for k in ("key", "label", "variable")
        ):
            raise TorchsplitError(
                f"target_pattern #{index} needs key, label and variable templates", path=where
            )
        kind = spec.get("kind", "cc_library")
        if kind not in _KINDS:
            raise TorchsplitError(f"target_pattern #{index} kind must be one of {_KINDS}", where)
        deps = _str_list(spec.get("deps", []), f"target_pattern #{index} deps", where)
        for dep in deps:
            if dep not in ruleset.targets:
                raise TorchsplitError(f"target_pattern #{index} depends on unknown {dep!r}", where)
        ruleset.target_patterns.append(
            TargetPattern(spec["key"], spec["label"], spec["variable"], kind, deps)
        )

    raw_rules = data.get("rule")
    if not isinstance(raw_rules, list) or not raw_rules:
        raise TorchsplitError("expected at least one [[rule]] table", path=where)
    seen: set[str] = set()
    for index, spec in enumerate(raw_rules, start=1):
        if not isinstance(spec, dict):
            raise TorchsplitError(f"rule #{index} must be a table", path=where)
        unknown = set(spec) - _RULE_KEYS
        if unknown:
            raise TorchsplitError(
                f"rule #{index} has unknown keys {sorted(unknown)}; allowed: {sorted(_RULE_KEYS)}",
                path=where,
            )
        name = spec.get("name")
        if not isinstance(name, str) or not name:
            raise TorchsplitError(f"rule #{index} needs a name", path=where)
        if name in seen:
            raise TorchsplitError(f"rule name {name!r} is used twice", path=where)
        seen.add(name)
        target = spec.get("target")
        if not isinstance(target, str):
            raise TorchsplitError(f'rule {name!r} needs target = "<target key>"', path=where)
        list_regex = spec.get("list_regex")
        if "{" not in target and target != STAY_IN_CORE and target not in ruleset.targets:
            raise TorchsplitError(f"rule {name!r} names unknown target {target!r}", path=where)
        cuda = spec.get("cuda")
        if cuda is not None and not isinstance(cuda, bool):
            raise TorchsplitError(f"rule {name!r}: cuda must be true or false", path=where)
        cuda_list = spec.get("cuda_list")
        if cuda_list is not None and not isinstance(cuda_list, bool):
            raise TorchsplitError(f"rule {name!r}: cuda_list must be true or false", path=where)
        ruleset.rules.append(
            Rule(
                name=name,
                target=target,
                why=str(spec.get("why", "")),
                cuda=cuda,
                cuda_list=cuda_list,
                lists=_str_list(spec.get("list", []), f"rule {name!r} list", where),
                list_regex=_compile(list_regex, f"rule {name!r}", where) if list_regex else None,
                paths=tuple(
                    _compile(p, f"rule {name!r}", where)
                    for p in _str_list(spec.get("path", []), "path", where)
                ),
                not_paths=tuple(
                    _compile(p, f"rule {name!r}", where)
                    for p in _str_list(spec.get("not_path", []), "not_path", where)
                ),
                suffixes=_str_list(spec.get("suffix", []), f"rule {name!r} suffix", where),
                fallback=bool(spec.get("fallback", False)),
                flag=str(spec.get("flag", "")),
            )
        )
    ruleset.header_suffixes = _str_list(
        detect.get("header_suffixes", list(ruleset.header_suffixes)), "header_suffixes", where
    )
    ruleset.generated = tuple(
        _compile(p, "detect.generated", where)
        for p in _str_list(detect.get("generated", []), "generated", where)
    )
    ruleset.data_lists = _str_list(detect.get("data_lists", []), "data_lists", where)
    for spec in data.get("library", []):
        if not isinstance(spec, dict) or "name" not in spec:
            raise TorchsplitError('each [[library]] needs name = "..." and lists', path=where)
        lists = _str_list(spec.get("lists", []), "library lists", where)
        ruleset.libraries.append(Library(str(spec["name"]), lists))
    for spec in data.get("glob", []):
        if not isinstance(spec, dict) or "pattern" not in spec:
            raise TorchsplitError('each [[glob]] needs pattern = "..."', path=where)
        exclude = _str_list(spec.get("exclude", []), "glob exclude", where)
        ruleset.globs.append(Glob(str(spec["pattern"]), exclude))
    if not any(rule.fallback for rule in ruleset.rules):
        raise TorchsplitError(
            "the last rule must be a catch-all with fallback = true (every source needs a "
            "destination)",
            path=where,
        )
    return ruleset


def load_rules(path: str | Path | None = None) -> RuleSet:
    """Load a rules file, or the packaged default (upstream PyTorch) when ``path`` is None."""
    if path is None:
        text = resources.files("torchsplit.reorg.data").joinpath(DEFAULT_RULES).read_text("utf-8")
        where = f"<default rules {DEFAULT_RULES}>"
    else:
        where = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise TorchsplitError("rules file not found", path=where) from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TorchsplitError(f"invalid TOML: {exc}", path=where) from exc
    return parse_rules(data, where)


def match_rule(rule: Rule, ruleset: RuleSet, list_name: str, source: str) -> tuple[str, str] | None:
    """``(target key, reason)`` when ``rule`` matches the pair, else None."""
    groups: dict[str, str] = {}
    reasons: list[str] = []
    if rule.lists:
        if not any(fnmatch.fnmatchcase(list_name, pat) for pat in rule.lists):
            return None
        reasons.append(f"list {list_name}")
    if rule.list_regex is not None:
        m = rule.list_regex.fullmatch(list_name)
        if m is None:
            return None
        groups = {k: v for k, v in m.groupdict().items() if v is not None}
        if not rule.lists:
            reasons.append(f"list {list_name}")
    if rule.paths:
        hit = next((p for p in rule.paths if p.search(source)), None)
        if hit is None:
            return None
        reasons.append(f"path ~ {hit.pattern}")
    if any(p.search(source) for p in rule.not_paths):
        return None
    if rule.suffixes:
        suffix = next((s for s in rule.suffixes if source.endswith(s)), None)
        if suffix is None:
            return None
        reasons.append(f"suffix {suffix}")
    if rule.cuda_list is not None:
        if ruleset.list_is_cuda(list_name) != rule.cuda_list:
            return None
        reasons.append(f"{'CUDA' if rule.cuda_list else 'non-CUDA'} list {list_name}")
    if rule.cuda is not None:
        why_cuda = None
        if ruleset.list_is_cuda(list_name):
            why_cuda = f"CUDA list {list_name}"
        else:
            why_cuda = ruleset.name_is_cuda(source)
        if bool(why_cuda) != rule.cuda:
            return None
        reasons.insert(0, why_cuda or "not CUDA")
    target = rule.target
    if "{" in target:
        try:
            target = target.format_map(groups)
        except KeyError as exc:
            raise TorchsplitError(
                f"rule {rule.name!r}: target {rule.target!r} uses group {exc} that list_regex "
                "did not capture",
                path=ruleset.source,
            ) from exc
        if target not in ruleset.targets and ruleset.instantiate(target, groups) is None:
            raise TorchsplitError(
                f"rule {rule.name!r} maps list {list_name!r} to unknown target {target!r}",
                path=ruleset.source,
            )
    return target, "; ".join(reasons) if reasons else "catch-all"
