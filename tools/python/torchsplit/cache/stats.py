"""Remote-cache hit rates from Bazel's output or its execution log.

Bazel ends every build with ``INFO: 57 processes: 24 remote cache hit, 33 internal.``
Internal processes (symlink trees, file writes) never reach a cache, so the hit rate
is hits over the other processes. ``--execution_log_json_file`` gives the same per
action (a stream of JSON objects, not JSON lines): ``remoteCacheable`` and
``remoteCacheHit`` per spawn, plus inputs and outputs to compare two builds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from torchsplit.errors import TorchsplitError

_SUMMARY = re.compile(r"^INFO: (\d+) process(?:es)?(?:: (.*?))?\.?\s*$", re.MULTILINE)
_PART = re.compile(r"^(\d+) (.+)$")
# What Bazel 4.2.3 warns when the cache fails a request (it then runs the action locally).
_CACHE_WARNING = re.compile(
    r"^WARNING: .*(?:Remote Cache|remote cache|--remote_cache|CacheNotFound|ActionResult)",
    re.MULTILINE,
)


@dataclass(frozen=True)
class CacheStats:
    """Processes of one or more Bazel commands, by the strategy that produced them."""

    total: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    warnings: int = 0

    @property
    def hits(self) -> int:
        return self.by_kind.get("remote cache hit", 0)

    @property
    def cacheable(self) -> int:
        return self.total - self.by_kind.get("internal", 0)

    @property
    def rate(self) -> float:
        return self.hits / self.cacheable if self.cacheable else 0.0

    def __add__(self, other: CacheStats) -> CacheStats:
        kinds = dict(self.by_kind)
        for kind, count in other.by_kind.items():
            kinds[kind] = kinds.get(kind, 0) + count
        return CacheStats(self.total + other.total, kinds, self.warnings + other.warnings)

    def sentence(self) -> str:
        """``remote cache: 37/45 cacheable actions hit (82%)``, plus any cache warnings."""
        text = f"remote cache: {self.hits}/{self.cacheable} cacheable actions hit"
        if self.cacheable:
            text += f" ({self.rate:.0%})"
        else:
            text += " (every action was up to date locally)"
        if self.warnings:
            text += f"; {self.warnings} cache warning(s): the cache failed some requests"
        return text


def parse_summary(text: str) -> CacheStats:
    """Sums every ``INFO: N processes: ...`` line in a Bazel log (one per command)."""
    stats = CacheStats()
    found = False
    for match in _SUMMARY.finditer(text):
        found = True
        kinds: dict[str, int] = {}
        for part in (match.group(2) or "").split(","):
            m = _PART.match(part.strip())
            if m:
                kinds[m.group(2)] = kinds.get(m.group(2), 0) + int(m.group(1))
        stats = stats + CacheStats(int(match.group(1)), kinds)
    if not found:
        raise TorchsplitError("no 'INFO: N processes' line: not a (finished) Bazel build log")
    return CacheStats(stats.total, stats.by_kind, len(_CACHE_WARNING.findall(text)))


# tools/dev writes this line into its Bazel log before each command, so each
# "INFO: N processes" line can be attributed to its invocation.
INVOCATION_MARK = "torchsplit: bazel "


def parse_invocations(text: str) -> list[tuple[str, CacheStats]]:
    """One CacheStats per Bazel invocation in a log, named after it.

    Summing invocations is what once printed "95/93 cacheable actions hit (102%)"; per
    invocation, hits never exceed the cacheable processes. Without tools/dev's marks,
    each summary line is an invocation of its own ("invocation 1", ...).
    """
    segments: list[tuple[str, str]] = []
    name, lines = "", []
    for line in text.splitlines():
        if line.startswith(INVOCATION_MARK):
            segments.append((name, "\n".join(lines)))
            name, lines = line[len(INVOCATION_MARK) :].strip(), []
        else:
            lines.append(line)
    segments.append((name, "\n".join(lines)))
    out: list[tuple[str, CacheStats]] = []
    for name, segment in segments:
        if not _SUMMARY.search(segment):
            continue
        for i, match in enumerate(_SUMMARY.finditer(segment)):
            label = name or f"invocation {len(out) + 1}"
            if i:
                label += f" (summary {i + 1})"
            out.append((label, parse_summary(match.group(0) + "\n")))
        warnings = len(_CACHE_WARNING.findall(segment))
        if warnings:
            label, stats = out[-1]
            out[-1] = (label, CacheStats(stats.total, stats.by_kind, warnings))
    if not out:
        raise TorchsplitError("no 'INFO: N processes' line: not a (finished) Bazel build log")
    return out


def iter_json_stream(text: str) -> Iterator[dict[str, object]]:
    """Decodes concatenated JSON objects (Bazel's execution log format)."""
    decoder = json.JSONDecoder()
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos].isspace():
            pos += 1
        if pos >= end:
            return
        obj, pos = decoder.raw_decode(text, pos)
        if isinstance(obj, dict):
            yield obj


@dataclass(frozen=True)
class Spawn:
    """One spawned action from an execution log, reduced to what comparisons need."""

    mnemonic: str
    output: str  # first listed output: identifies the action across builds
    cacheable: bool
    hit: bool
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    inputs: dict[str, str]  # path -> sha256
    outputs: dict[str, str]


def load_exec_log(path: str | Path) -> list[Spawn]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise TorchsplitError("execution log not found", str(path)) from exc
    spawns = []
    for obj in iter_json_stream(text):
        outputs = _digests(obj.get("actualOutputs"))
        listed = obj.get("listedOutputs")
        first = listed[0] if isinstance(listed, list) and listed else next(iter(outputs), "")
        spawns.append(
            Spawn(
                mnemonic=str(obj.get("mnemonic", "")),
                output=str(first),
                cacheable=bool(obj.get("remoteCacheable", obj.get("cacheable", False))),
                hit=bool(obj.get("remoteCacheHit", False)),
                args=tuple(str(a) for a in _list(obj.get("commandArgs"))),
                env=tuple(
                    (str(e.get("name")), str(e.get("value")))
                    for e in _list(obj.get("environmentVariables"))
                    if isinstance(e, dict)
                ),
                inputs=_digests(obj.get("inputs")),
                outputs=outputs,
            )
        )
    return spawns


def exec_log_stats(spawns: Iterable[Spawn]) -> CacheStats:
    """Stats from an execution log: cacheable spawns and those served by the cache."""
    spawns = list(spawns)
    cacheable = [s for s in spawns if s.cacheable]
    hits = sum(1 for s in cacheable if s.hit)
    # Spawns no cache may serve play the part of the summary line's "internal".
    kinds = {"remote cache hit": hits, "internal": len(spawns) - len(cacheable)}
    return CacheStats(len(spawns), kinds)


def explain_misses(before: list[Spawn], after: list[Spawn], limit: int = 20) -> list[str]:
    """For each cache miss in ``after``, what differs from the same action in ``before``."""
    known = {s.output: s for s in before}
    lines: list[str] = []
    for spawn in after:
        if spawn.hit or not spawn.cacheable:
            continue
        old = known.get(spawn.output)
        head = f"{spawn.mnemonic} {spawn.output}"
        if old is None:
            lines.append(f"{head}: not in the first build")
        else:
            lines.append(f"{head}: {'; '.join(_differences(old, spawn)) or 'same key?'}")
        if len(lines) >= limit:
            break
    return lines


def _differences(a: Spawn, b: Spawn) -> list[str]:
    found = []
    if a.args != b.args:
        changed = [f"{x!r} -> {y!r}" for x, y in zip(a.args, b.args, strict=False) if x != y]
        found.append("arguments differ: " + ", ".join(changed[:3] or ["length"]))
    if a.env != b.env:
        found.append(f"environment differs: {sorted(set(a.env) ^ set(b.env))[:4]}")
    changed_inputs = sorted(
        p for p in set(a.inputs) | set(b.inputs) if a.inputs.get(p) != b.inputs.get(p)
    )
    if changed_inputs:
        found.append(f"{len(changed_inputs)} input(s) differ: {', '.join(changed_inputs[:4])}")
    return found


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _digests(entries: object) -> dict[str, str]:
    result: dict[str, str] = {}
    for entry in _list(entries):
        if isinstance(entry, dict):
            digest = entry.get("digest")
            value = digest.get("hash", "") if isinstance(digest, dict) else ""
            result[str(entry.get("path"))] = str(value)
    return result
