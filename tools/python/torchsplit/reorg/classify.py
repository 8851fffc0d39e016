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
* ``generated-source``   a list holding entries the build produces (Buck labels, build-dir
                         paths): the overlay replaces them by a named stand-in per target
* ``header-in-sources``  a list holding headers: the overlay puts them in ``hdrs``
* ``bare-name``          a list holding bare file names (no directory): placed nowhere
* ``unexpanded-glob``    a glob upstream uses for files it does not list, not expanded
                         because no source tree or file list was given
* whatever a rule names with ``flag`` (``defines-main``, ``fb-internal``, ...)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from torchsplit.reorg.rules import STAY_IN_CORE, Rule, RuleSet, match_rule
from torchsplit.reorg.starlark_eval import Evaluation

_ROLE_FLAGS = {
    "generated": (
        "generated-source",
        "produced by the build (Buck labels or build-directory paths), not files of the "
        "tree; their target names one stand-in for them, <target>_generated",
    ),
    "header": ("header-in-sources", "headers in a source list; the overlay puts them in hdrs"),
    "data": (
        "data-for-a-generator",
        "files a code generator reads (never compiled); their target carries them as data",
    ),
    "bare": (
        "bare-name",
        "bare file names with no directory, computed by the file; there is no path to "
        "place, so they are left out of every target",
    ),
}


@dataclass(frozen=True)
class Decision:
    source: str
    target: str  # target label
    rule: str
    reason: str
    lists: tuple[str, ...]  # every list that contains the source
    home_lists: tuple[str, ...]  # lists whose definition spells it
    lines: tuple[int, ...]  # lines of build_variables.bzl that spell it
    role: str = "source"  # source | header | generated | bare (RuleSet.role)
    library: str = ""  # upstream library it was built into (RuleSet.library_of)


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


def _first(rules: list[Rule], ruleset: RuleSet, source: str, candidates: list[str]):  # type: ignore[no-untyped-def]
    for index, rule in enumerate(rules):
        for list_name in candidates:
            hit = match_rule(rule, ruleset, list_name, source)
            if hit is not None:
                return index, rule, hit
    raise AssertionError("rules always end with a fallback")  # enforced by parse_rules


def _decide(
    ruleset: RuleSet, source: str, candidates: list[str]
) -> tuple[str, str, str, bool, list[Rule]]:
    """``(label, rule name, reason, fell back, rules that decided)``. A rule sending the
    source to ``@core`` hands over to the first later rule with no CUDA condition."""
    rules = ruleset.rules
    index, rule, (key, reason) = _first(rules, ruleset, source, candidates)
    chain = [rule]
    while key == STAY_IN_CORE:
        rest = [r for r in rules[index + 1 :] if r.cuda is None and r.target != STAY_IN_CORE]
        _, rule, (key, more) = _first(rest, ruleset, source, candidates)
        chain.append(rule)
        reason = f"{reason}; {more}"
        index = len(rules)
    name = "+".join(r.name for r in chain)
    return ruleset.targets[key].label, name, reason, chain[-1].fallback, chain


def classify(
    evaluation: Evaluation,
    ruleset: RuleSet,
    *,
    source_tree: str | Path | None = None,
    unexpanded_globs: list[str] | None = None,
) -> Classification:
    """Decide every source. ``unexpanded_globs`` names upstream globs that were not
    expanded (no tree given): they are flagged, so coverage is never silently partial."""
    unexpanded_globs = unexpanded_globs or []
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
    role_lists: dict[tuple[str, str], list[str]] = {}
    for source in sorted(containing):
        lists = sorted(set(containing[source]))
        literals = evaluation.home_of(source)
        homes = sorted({lit.region for lit in literals if lit.region in lists})
        lines = tuple(sorted({lit.line for lit in literals if lit.region in homes}))
        candidates = homes or lists
        label, rule, reason, fallback, chain = _decide(ruleset, source, candidates)
        role = ruleset.role(source, lists)
        result.decisions[source] = Decision(
            source,
            label,
            rule,
            reason,
            tuple(lists),
            tuple(homes),
            lines,
            role,
            ruleset.library_of(lists),
        )
        if role in _ROLE_FLAGS:
            for list_name in candidates:
                role_lists.setdefault((role, list_name), []).append(source)
        for decider in chain:
            if decider.flag:
                result.flags.append(Flag(decider.flag, source, decider.why, lines))
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
            # Core libraries share files on purpose (upstream builds the lite interpreter's
            # sources into torch_cpu too); only a core/device disagreement needs a human.
            if len({label.split(":")[0] for label in per_home.values()}) > 1:
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
        if source_tree is not None and role in ("source", "header"):
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
    for (role, list_name), sources in sorted(role_lists.items()):
        kind, text = _ROLE_FLAGS[role]
        example = sources[0]
        result.flags.append(
            Flag(
                kind,
                list_name,
                f"{len(sources)} entr{'y' if len(sources) == 1 else 'ies'} {text} (e.g. {example})",
                (evaluation.list_lines.get(list_name, 0),),
            )
        )
    for glob in unexpanded_globs:
        result.flags.append(
            Flag(
                "unexpanded-glob",
                glob,
                "upstream finds these files by glob instead of listing them; they are in no "
                "target here. Give --source-tree or --file-list to place them.",
            )
        )
    result.flags.sort(key=lambda f: (f.kind, f.subject))
    return result


def expand_globs(evaluation: Evaluation, ruleset: RuleSet, files: list[str]) -> dict[str, int]:
    """Add one list ``glob(<pattern>)`` per upstream glob: the files of ``files`` it matches
    that no list names already. Returns how many each added."""
    listed = {v for values in evaluation.lists.values() for v in values}
    added: dict[str, int] = {}
    for glob in ruleset.globs:
        found = sorted(
            f
            for f in files
            if f.endswith(ruleset.glob_suffixes) and glob.matches(f) and f not in listed
        )
        listed.update(found)
        added[glob.list_name] = len(found)
        if found:
            evaluation.lists[glob.list_name] = found
            evaluation.list_lines[glob.list_name] = 0
    return added
