"""The strict set of actions that depend on a source file, from ``bazel aquery --output=jsonproto``.

An action depends on a file when the file is among its inputs, or among the inputs of
an action whose outputs it consumes (transitively). Only actions Bazel spawns as
processes are counted; internal ones (symlinks, file writes, middlemen) never run a tool.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

INTERNAL = frozenset(
    {
        "Middleman",
        "FileWrite",
        "SourceSymlinkManifest",
        "SymlinkTree",
        "Symlink",
        "SolibSymlink",
        "TemplateExpand",
        "ExecutableSymlink",
        "PythonZipper",
    }
)


@dataclass(frozen=True)
class Action:
    mnemonic: str
    outputs: tuple[str, ...]
    inputs: frozenset[str]


def parse_aquery(text: str) -> list[Action]:
    data = json.loads(text)
    fragments = {f["id"]: f for f in data.get("pathFragments", [])}
    paths: dict[int, str] = {}

    def path_of(fragment_id: int) -> str:
        parts = []
        current: int | None = fragment_id
        while current:
            fragment = fragments[current]
            parts.append(fragment["label"])
            current = fragment.get("parentId")
        return "/".join(reversed(parts))

    for artifact in data.get("artifacts", []):
        paths[artifact["id"]] = path_of(artifact["pathFragmentId"])
    depsets = {d["id"]: d for d in data.get("depSetOfFiles", [])}
    expanded: dict[int, frozenset[str]] = {}

    def expand(depset_id: int) -> frozenset[str]:
        if depset_id not in expanded:
            node = depsets[depset_id]
            files = {paths[a] for a in node.get("directArtifactIds", [])}
            for child in node.get("transitiveDepSetIds", []):
                files |= expand(child)
            expanded[depset_id] = frozenset(files)
        return expanded[depset_id]

    actions = []
    for action in data.get("actions", []):
        inputs: set[str] = set()
        for depset_id in action.get("inputDepSetIds", []):
            inputs |= expand(depset_id)
        outputs = tuple(paths[o] for o in action.get("outputIds", []))
        actions.append(Action(action["mnemonic"], outputs, frozenset(inputs)))
    return actions


def dependents(actions: Iterable[Action], source: str) -> list[Action]:
    """Spawned actions that (transitively) read ``source``."""
    actions = list(actions)
    tainted = {source}
    hit: dict[int, Action] = {}
    changed = True
    while changed:
        changed = False
        for index, action in enumerate(actions):
            if index not in hit and action.inputs & tainted:
                hit[index] = action
                tainted.update(action.outputs)
                changed = True
    return [a for a in hit.values() if a.mnemonic not in INTERNAL]
