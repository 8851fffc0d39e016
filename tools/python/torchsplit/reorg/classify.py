"""Give every source in every list exactly one destination target, and flag what needs a human.

For each source the *candidate lists* are its home lists (the top-level definitions whose
text spells it, see ``Evaluation.home_of``), or every list containing it when it is not
spelled anywhere. Rules are tried in order; the first rule matching any candidate list
decides. Flags:

* ``cuda-in-core-list``  a CUDA-looking file (name word or suffix) defined in a non-CUDA list
* ``in-two-lists``       a file spelled in two or more top-level definitions
* ``duplicate-in-list``  a list holding the same entry more than once
* ``list-without-rule``  a list whose sources reached a fallback (catch-all) rule
* ``missing-source``     a source absent from the given source tree
* ``conflicting-homes``  a file whose home lists would send it to different targets
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from torchsplit.reorg.rules import RuleSet, match_rule
from torchsplit.reorg.starlark_eval import Evaluation


@dataclass(frozen=True)
class Decision:
    source: str
    target: str  # target label
    rule: str
    reason: str
    lists: tuple[str, ...]  # every list that contains the source
    home_lists: tuple[str, ...]  # lists whose definition spells it
    lines: tuple[int, ...]  # lines of build_variables.bzl that spell it


@dataclass(frozen=True)
class Flag:
    kind: str
    subject: str
    message: str
    lines: tuple[int, ...] = ()


@dataclass
class Classification:
    input_name: str
    rules_name: str
    decisions: dict[str, Decision] = field(default_factory=dict)
    flags: list[Flag] = field(default_factory=list)
    target_labels: list[str] = field(default_factory=list)

    def by_target(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {label: [] for label in self.target_labels}
        for source in sorted(self.decisions):
            out.setdefault(self.decisions[source].target, []).append(source)
        return out

    def flags_of(self, kind: str) -> list[Flag]:
        return [f for f in self.flags if f.kind == kind]


def _is_label(source: str) -> bool:
    return source.startswith((":", "//", "@"))


def _decide(ruleset: RuleSet, source: str, candidates: list[str]) -> tuple[str, str, str, bool]:
    for rule in ruleset.rules:
        for list_name in candidates:
            hit = match_rule(rule, ruleset, list_name, source)
            if hit is not None:
                key, reason = hit
                return ruleset.targets[key].label, rule.name, reason, rule.fallback
    raise AssertionError("rules always end with a fallback")  # enforced by parse_rules


def classify(
    evaluation: Evaluation, ruleset: RuleSet, *, source_tree: str | Path | None = None
) -> Classification:
    result = Classification(
        input_name=evaluation.path,
        rules_name=ruleset.name,
        target_labels=[t.label for t in ruleset.targets.values()],
    )
    containing: dict[str, list[str]] = {}
    for list_name, values in evaluation.lists.items():
        for value in values:
            bucket = containing.setdefault(value, [])
            if not bucket or bucket[-1] != list_name:
                bucket.append(list_name)
        dups = sorted(v for v, n in Counter(values).items() if n > 1)
        if dups:
            result.flags.append(
                Flag(
                    "duplicate-in-list",
                    list_name,
                    f"{len(dups)} entr{'y' if len(dups) == 1 else 'ies'} more than once: "
                    + ", ".join(dups),
                    (evaluation.list_lines.get(list_name, 0),),
                )
            )

    fallback_lists: dict[str, list[str]] = {}
    for source in sorted(containing):
        lists = sorted(set(containing[source]))
        literals = evaluation.home_of(source)
        homes = sorted({lit.region for lit in literals if lit.region in lists})
        lines = tuple(sorted({lit.line for lit in literals if lit.region in homes}))
        candidates = homes or lists
        label, rule, reason, fallback = _decide(ruleset, source, candidates)
        result.decisions[source] = Decision(
            source, label, rule, reason, tuple(lists), tuple(homes), lines
        )
        if fallback:
            for list_name in candidates:
                fallback_lists.setdefault(list_name, []).append(source)
        if len(homes) > 1:
            per_home = {h: _decide(ruleset, source, [h])[0] for h in homes}
            result.flags.append(
                Flag(
                    "in-two-lists",
                    source,
                    f"defined in {len(homes)} lists: {', '.join(homes)}",
                    lines,
                )
            )
            if len(set(per_home.values())) > 1:
                detail = ", ".join(f"{h} -> {t}" for h, t in per_home.items())
                result.flags.append(
                    Flag(
                        "conflicting-homes",
                        source,
                        f"its lists disagree ({detail}); decided {label} by rule {rule}",
                        lines,
                    )
                )
        core_homes = [h for h in homes if not ruleset.list_is_cuda(h)]
        why_cuda = ruleset.name_is_cuda(source)
        if core_homes and why_cuda:
            result.flags.append(
                Flag(
                    "cuda-in-core-list",
                    source,
                    f"looks CUDA ({why_cuda}) but is defined in {', '.join(core_homes)}; "
                    f"decided {label} by rule {rule}",
                    lines,
                )
            )
        if source_tree is not None and not _is_label(source):
            if not (Path(source_tree) / source).exists():
                result.flags.append(
                    Flag(
                        "missing-source",
                        source,
                        f"not found under the source tree (listed in {', '.join(lists)})",
                        lines,
                    )
                )
    for list_name in sorted(fallback_lists):
        sources = fallback_lists[list_name]
        result.flags.append(
            Flag(
                "list-without-rule",
                list_name,
                f"no rule names this list; {len(sources)} source(s) fell through to the "
                "catch-all rule",
                (evaluation.list_lines.get(list_name, 0),),
            )
        )
    result.flags.sort(key=lambda f: (f.kind, f.subject))
    return result
