"""What a derived backend is granted centrally: the layering policy's entries and MODULE.bazel's.

A backend derived like torch_hip needs what torch_hip has in
``tools/layering/policy.bzl``: a ``DERIVED_BACKENDS`` entry (its parent, the
translation rule kinds) and a ``TOOLKITS`` entry (the model's toolkit
repositories and vendor families, copied). Who may see a toolkit repository
follows from ``TOOLKITS``: WORKSPACE passes ``toolkit_visibility(repo)`` from
``tools/layering/rules.bzl``; MODULE.bazel, which cannot load it, spells the
lists out and is rewritten here from the edited policy (tests/bazel/
test_module_drift.py compares the two files).

Everything is computed in memory (:func:`grant_derived`); :func:`apply` writes
the files, each atomically, and :func:`restore` puts the earlier texts back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from torchsplit.audit.policy import Policy, parse_policy
from torchsplit.errors import TorchsplitError
from torchsplit.fsutil import write_output

POLICY = "tools/layering/policy.bzl"
MODULE = "MODULE.bazel"

# One entry of a policy dict: a line `    "key": ...` up to the next one (4-space indent).
_ENTRY = re.compile(r"(?m)^(?=    \")")
# One extension tag call of MODULE.bazel: `ext.tag(\n ... \n)`.
_TAG = re.compile(r"(?ms)^(\w+)\.(\w+)\(\n(.*?)^\)\n")
_TAG_NAME = re.compile(r'^\s*name = "([^"]+)",$', re.MULTILINE)
_VISIBILITY = re.compile(r"(?ms)^(    \w+_visibility) = \[.*?\],\n")


@dataclass(frozen=True)
class Grant:
    """A derived backend's central entries: copied from `model`, derived from `parent`."""

    backend: str  # torch_musa
    model: str  # torch_hip: the in-tree derivation whose toolkit is copied
    parent: str  # torch_cuda
    via: tuple[str, ...]  # the translation rule kinds


def _dict_body(text: str, name: str) -> tuple[int, int]:
    """Offsets of the body of the top-level `NAME = {...}` dict (inside the braces)."""
    opener = f"\n{name} = {{\n"
    start = text.find(opener)
    end = text.find("\n}\n", start) if start >= 0 else -1
    if start < 0 or end < 0:
        raise TorchsplitError(f"no {name} = {{...}} dict to add the backend to", POLICY)
    return start + len(opener), end + 1


def _entries(body: str) -> tuple[list[str], dict[str, str]]:
    """A dict body split into its leading lines (comments) and its entries by key."""
    chunks = [c for c in _ENTRY.split(body) if c]
    head = [c for c in chunks if not c.startswith('    "')]
    return head, {c.split('"')[1]: c for c in chunks if c.startswith('    "')}


def add_entry(text: str, name: str, key: str, entry: str) -> str:
    """`text` with `entry` (a 4-space-indented `"key": ...,` block) added to dict `name`.

    Keys stay in sorted order; a key the dict has already is refused.
    """
    start, end = _dict_body(text, name)
    head, keyed = _entries(text[start:end])
    if key in keyed:
        raise TorchsplitError(f"{name} already has {key}: remove the stale entry first", POLICY)
    keyed[key] = entry
    body = "".join(head + [keyed[k] for k in sorted(keyed)])
    return text[:start] + body + text[end:]


def derived_entry(grant: Grant) -> str:
    """The DERIVED_BACKENDS entry of `grant.backend`."""
    via = ", ".join(f'"{kind}"' for kind in grant.via)
    return (
        f'    "{grant.backend}": {{\n        "from": "{grant.parent}",\n'
        f'        "via": [{via}],\n    }},\n'
    )


def toolkit_entry(text: str, grant: Grant) -> str:
    """The model's TOOLKITS entry (its comments kept) under `grant.backend`'s key."""
    start, end = _dict_body(text, "TOOLKITS")
    _, keyed = _entries(text[start:end])
    model = keyed.get(grant.model)
    if model is None:
        raise TorchsplitError(
            f"TOOLKITS has no entry for {grant.model}, the derivation {grant.backend} is "
            "modelled on: nothing to copy",
            POLICY,
        )
    first, rest = model.split("\n", 1)
    note = (
        f"        # {grant.model}'s toolkit: derived from {grant.parent} like it "
        "(tools/torchsplit new-backend)\n"
    )
    return first.replace(f'"{grant.model}"', f'"{grant.backend}"', 1) + "\n" + note + rest


def edit_policy(text: str, grant: Grant) -> tuple[str, Policy]:
    """policy.bzl's text with `grant`'s entries, and that text evaluated (still a policy)."""
    before = parse_policy(text, POLICY)
    for name, entries in (("DERIVED_BACKENDS", before.derived), ("TOOLKITS", before.toolkits)):
        if grant.backend in entries:
            raise TorchsplitError(
                f"{name} already has {grant.backend} (with no third_device/{grant.backend}): "
                "remove the stale entry first",
                POLICY,
            )
    text = add_entry(text, "DERIVED_BACKENDS", grant.backend, derived_entry(grant))
    text = add_entry(text, "TOOLKITS", grant.backend, toolkit_entry(text, grant))
    after = parse_policy(text, POLICY)
    if after.toolkits.get(grant.backend) != before.toolkits[grant.model] or after.derived.get(
        grant.backend
    ) != (grant.parent, grant.via):
        raise TorchsplitError(f"the edited policy does not grant {grant.backend} as intended")
    return text, after


def _visibility_list(attr: str, labels: list[str]) -> str:
    if len(labels) == 1:
        return f'{attr} = ["{labels[0]}"],\n'
    inner = "".join(f'        "{label}",\n' for label in labels)
    return f"{attr} = [\n{inner}    ],\n"


def sync_module(text: str, policy: Policy) -> str:
    """MODULE.bazel with each toolkit repository's visibility list the policy's.

    The extension tags that create a TOOLKITS repository (`name = "local_hip"`)
    and pass a `*_visibility` list get `toolkit_visibility(name)`, as WORKSPACE does.
    """
    toolkit_repos = {r for t in policy.toolkits.values() for r in t.repositories}

    def tag(m: re.Match[str]) -> str:
        body = m.group(3)
        named = _TAG_NAME.search(body)
        if named is None or named.group(1) not in toolkit_repos:
            return m.group(0)
        labels = policy.toolkit_visibility(named.group(1))
        body = _VISIBILITY.sub(lambda v: _visibility_list(v.group(1), labels), body)
        return f"{m.group(1)}.{m.group(2)}(\n{body})\n"

    return _TAG.sub(tag, text)


def grant_derived(root: Path, grant: Grant) -> dict[str, str]:
    """The new texts of policy.bzl and MODULE.bazel (path relative to root -> text)."""
    policy_text, policy = edit_policy((root / POLICY).read_text(encoding="utf-8"), grant)
    out = {POLICY: policy_text}
    module = root / MODULE
    if module.exists():
        text = module.read_text(encoding="utf-8")
        synced = sync_module(text, policy)
        if synced != text:
            out[MODULE] = synced
    return out


def apply(root: Path, texts: Mapping[str, str]) -> dict[str, str | None]:
    """Writes each file (atomically); the earlier texts, for :func:`restore`.

    A failure part-way restores what was written before it is raised.
    """
    old: dict[str, str | None] = {}
    try:
        for rel, text in texts.items():
            path = root / rel
            old[rel] = path.read_text(encoding="utf-8") if path.exists() else None
            write_output(path, text)
    except BaseException:
        restore(root, old)
        raise
    return old


def restore(root: Path, old: Mapping[str, str | None]) -> None:
    """Puts back the texts :func:`apply` returned (a file that did not exist is removed)."""
    for rel, text in old.items():
        path = root / rel
        if text is None:
            path.unlink(missing_ok=True)
        else:
            write_output(path, text)
