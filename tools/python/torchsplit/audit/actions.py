"""The action graph of the current configuration (``bazel aquery``): what the compile and
link actions of core and every backend actually receive, and what they produce.

Two audit checks read it:

* the effective-flags check (below): the ``-l``/``-L``/``-I``/``-D``... arguments of the
  CppCompile and CppLink actions, whoever computed them (a literal in a BUILD file, a
  neutral //tools macro, a dependency's ``linkopts`` or ``defines`` that propagate);
* the artifact check (artifacts.py): the outputs of the CppLink actions, so it reads what
  this configuration builds and never a stale file left under bazel-bin by an earlier
  build (a target since removed, another configuration).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from torchsplit import vendors
from torchsplit.audit.findings import Finding
from torchsplit.audit.layers import Layers
from torchsplit.audit.policy import Policy
from torchsplit.errors import TorchsplitError

MNEMONICS = ("CppCompile", "CppLink")


@dataclass(frozen=True)
class Action:
    mnemonic: str
    label: str  # the target that owns the action
    arguments: tuple[str, ...]
    outputs: tuple[str, ...]  # execution-root-relative paths (bazel-out/...)


def expression(layers: Layers) -> str:
    """The aquery expression: the compile and link actions of core's and each backend's targets."""
    roots = [*layers.core_roots, *(f"third_device/{b}" for b in layers.backends)]
    patterns = " + ".join(f"//{root}/..." for root in roots)
    return f"mnemonic('{'|'.join(MNEMONICS)}', {patterns})"


def parse(text: str) -> list[Action]:
    """Actions from ``aquery --output=jsonproto`` (Bazel 4.2.3's compressed path fragments)."""
    if not text.strip():
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TorchsplitError(f"cannot read bazel aquery's JSON output: {exc}") from exc
    fragments = {f["id"]: f for f in data.get("pathFragments", [])}

    def path(fragment_id: int) -> str:
        parts = []
        while fragment_id:
            fragment = fragments[fragment_id]
            parts.append(fragment["label"])
            fragment_id = fragment.get("parentId", 0)
        return "/".join(reversed(parts))

    artifacts = {}
    for artifact in data.get("artifacts", []):
        if "pathFragmentId" in artifact:
            artifacts[artifact["id"]] = path(artifact["pathFragmentId"])
        else:  # older output: the path in the artifact itself
            artifacts[artifact["id"]] = artifact.get("execPath", "")
    targets = {t["id"]: t["label"] for t in data.get("targets", [])}
    out = []
    for action in data.get("actions", []):
        out.append(
            Action(
                action.get("mnemonic", ""),
                targets.get(action.get("targetId"), ""),
                tuple(action.get("arguments", [])),
                tuple(artifacts.get(i, "") for i in action.get("outputIds", [])),
            )
        )
    return out


def _package(label: str) -> str:
    return label.removeprefix("@").removeprefix("//").partition(":")[0]


def _flag_family(argument: str, previous: str) -> tuple[str, str] | None:
    """(family, what) when a compile or link argument names a vendor."""
    if argument.startswith(("-D", "-U")) or previous in ("-D", "-U"):
        name = argument[2:] if argument.startswith(("-D", "-U")) else argument
        name = name.split("=", 1)[0]
        family = vendors.env_family(name) or _define_family(name)
        return (family, "a define") if family else None
    family = vendors.text_family(argument)
    if family:
        return family, "a library or toolkit path"
    if argument.startswith("-Wl,"):
        for part in argument[len("-Wl,") :].split(","):
            family = vendors.text_family(part)
            if family:
                return family, "a library or toolkit path"
    return None


def _define_family(name: str) -> str | None:
    """A define naming a vendor as a "_"-separated piece (USE_CUDA, __HIP_PLATFORM_AMD__)."""
    pieces = {p.lower() for p in name.split("_") if p}
    for family, words in vendors.SOURCE_PREFIX_WORDS.items():
        if pieces.intersection(words) or pieces.intersection(vendors.SOURCE_EXACT_WORDS[family]):
            return family
    return None


def check_flags(actions: list[Action], layers: Layers, policy: Policy) -> list[Finding]:
    """FLAGS findings: core's actions naming any vendor, a backend's naming a vendor not of
    its toolkit or another backend, and core linking a library outside CORE_NEEDED."""
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for action in actions:
        layer = layers.layer(_package(action.label) + "/BUILD")
        if layer is None:
            continue
        previous = ""
        for argument in action.arguments[1:]:
            key = (action.label, argument)
            hit = _flag_family(argument, previous)
            previous = argument
            if key in seen:
                continue
            why = layer.vendor_break(hit[0]) if hit else None
            if why and hit:
                seen.add(key)
                out.append(
                    Finding("FLAGS", why.rule, action.label, 0,
                            f"its {action.mnemonic} action receives {argument!r}, {hit[1]} of "
                            f"{hit[0]}", why.pair)
                )  # fmt: skip
                continue
            if layer.kind == "core" and action.mnemonic == "CppLink":
                library = core_link_library(argument, policy)
                if library:
                    seen.add(key)
                    out.append(
                        Finding("FLAGS", "CORE_NEEDED", action.label, 0,
                                f"its CppLink action receives {argument!r}: {library} is not among "
                                "the libraries core may link (CORE_NEEDED)", "core -> a library")
                    )  # fmt: skip
                    continue
            if layer.kind == "backend" and argument.startswith(("-l", "-Wl,")):
                for backend, name in layers.backends_named_in(argument, but=layer.name):
                    why = layer.backend_break(backend)
                    if why:
                        seen.add(key)
                        out.append(
                            Finding("FLAGS", why.rule, action.label, 0,
                                    f"its {action.mnemonic} action receives {argument!r}, "
                                    f"naming {name}", why.pair)
                        )  # fmt: skip
    return out


def core_link_library(argument: str, policy: Policy) -> str | None:
    """The library a -l flag asks for when CORE_NEEDED does not allow it (rules.bzl's
    core_may_link, for the flags the link action receives)."""
    parts = argument[len("-Wl,") :].split(",") if argument.startswith("-Wl,") else [argument]
    for part in parts:
        if not part.startswith("-l") or len(part) < 3:
            continue
        library = part[3:] if part.startswith("-l:") else f"lib{part[2:]}.so"
        if not any(library.startswith(p) for p in policy.core_needed):
            return library
    return None


@dataclass(frozen=True)
class Output:
    """A file a link action of the current action graph produces."""

    label: str  # the target owning the action
    path: str  # execution-root-relative (bazel-out/k8-fastbuild/bin/core/libtorch_core.so)
    file: Path  # where it is on disk

    @property
    def package(self) -> str:
        return _package(self.label)


def link_outputs(actions: list[Action], execroot: Path) -> list[Output]:
    """The outputs of every CppLink action (shared libraries, executables; not archives)."""
    out: list[Output] = []
    for action in actions:
        if action.mnemonic != "CppLink":
            continue
        for path in action.outputs:
            if path and not path.endswith((".a", ".lo", ".params")):
                out.append(Output(action.label, path, execroot / path))
    return out
