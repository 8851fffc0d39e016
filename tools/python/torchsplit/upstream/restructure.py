"""``torchsplit upstream restructure``: a real PyTorch tree as a git repository laid out as
the RFC proposes, in four commits:

1. the tree as released (the fetched tarball's files, nothing changed);
2. the move plan carried out with ``git mv``, as the emitted ``moves.sh`` does (only
   renames, so every file is a 100 % rename and ``git log --follow`` keeps its history);
3. ``third_device/torch_cuda/torch_patches/*.patch`` applied: the intra-file edits,
   the project's own text, kept as files too (the RFC's torch_patches);
4. the Bazel overlay: targets naming the post-move paths, header libraries serving
   moved headers under their old include spelling, c10/cuda compiled in
   ``//third_device/torch_cuda:c10_cuda``, upstream's c10 targets with the split's
   core rules, torchsplit's rules and layering policy, and the reports under
   ``torchsplit/``.

The repository is built in a temporary sibling of ``--out`` and renamed into place
(see ``torchsplit.fsutil.replace_directory``); a failed or killed run leaves the
previous result as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path

from torchsplit.errors import TorchsplitError
from torchsplit.fsutil import replace_directory
from torchsplit.reorg import emit, moves
from torchsplit.reorg.classify import Classification, classify, expand_globs
from torchsplit.reorg.rules import RuleSet, load_rules
from torchsplit.reorg.starlark_eval import evaluate
from torchsplit.upstream import overlay
from torchsplit.upstream.fetch import STAMP, read_stamp

PATCH_DIR = f"{overlay.CUDA_PACKAGE}/torch_patches"
# Inside .git, so the repository's working tree stays clean.
MARK = ".git/torchsplit-output"
# Reproducible commits: the same input gives the same hashes.
_ENV = {
    "GIT_AUTHOR_NAME": "torchsplit",
    "GIT_AUTHOR_EMAIL": "torchsplit@localhost",
    "GIT_COMMITTER_NAME": "torchsplit",
    "GIT_COMMITTER_EMAIL": "torchsplit@localhost",
    "GIT_AUTHOR_DATE": "2025-01-29T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2025-01-29T00:00:00+0000",
    "GIT_CONFIG_NOSYSTEM": "1",
}

Say = Callable[[str], None]


@dataclass
class Summary:
    out: Path
    files: int = 0
    moved: int = 0
    followed: int = 0  # headers and directory contents that followed their sources
    superseded: list[str] = field(default_factory=list)
    left_behind: int = 0
    patches: list[str] = field(default_factory=list)
    overlay_files: int = 0
    commits: list[tuple[str, str]] = field(default_factory=list)  # (hash, subject)
    targets: dict[str, int] = field(default_factory=dict)


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **_ENV, "HOME": str(repo.parent)}
    proc = subprocess.run(
        ["git", "-c", "core.quotepath=off", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if check and proc.returncode != 0:
        raise TorchsplitError(f"git {' '.join(args[:2])} failed:\n{proc.stderr.strip()[-2000:]}")
    return proc


def _commit(repo: Path, message: str, summary: Summary) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", message)
    head = _git(repo, "rev-parse", "--short=12", "HEAD").stdout.strip()
    summary.commits.append((head, message.splitlines()[0]))


def git_mv(repo: Path, planned: list[moves.Move]) -> None:
    """Carries out the plan with ``git mv``, as ``moves.sh`` does, but one ``git mv`` per
    destination directory (a call per file re-reads a 16,000-entry index each time),
    then removes the directories the moves emptied."""
    batches: dict[str, list[str]] = {}
    for m in planned:
        if os.path.basename(m.source) != os.path.basename(m.destination):
            raise TorchsplitError(f"a move renames its file: {m.source} -> {m.destination}")
        batches.setdefault(os.path.dirname(m.destination), []).append(m.source)
    for dest, sources in sorted(batches.items()):
        (repo / dest).mkdir(parents=True, exist_ok=True)
        for start in range(0, len(sources), 200):
            _git(repo, "mv", "--", *sources[start : start + 200], dest + "/")
    for source in sorted({os.path.dirname(m.source) for m in planned}, key=len, reverse=True):
        path = repo / source
        while path != repo and path.is_dir() and not any(path.iterdir()):
            path.rmdir()
            path = path.parent


def patches_for(version: str) -> list[tuple[str, str]]:
    """(name, text) of the torch_patches the project ships for ``version``, in order."""
    base = Path(str(resources.files("torchsplit.upstream").joinpath("data/torch_patches")))
    directory = base / version
    if not directory.is_dir():
        return []
    return [(p.name, p.read_text(encoding="utf-8")) for p in sorted(directory.glob("*.patch"))]


def tree_files(tree: Path) -> list[str]:
    """Every file of the tree, repository-relative, the fetch's stamp left out."""
    out = []
    for dirpath, dirnames, names in os.walk(tree):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        rel_dir = os.path.relpath(dirpath, tree)
        for name in names:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
            if rel != STAMP:
                out.append(rel)
    return sorted(out)


def classify_tree(tree: Path, files: list[str]) -> tuple[Classification, RuleSet, object]:
    """The reorg classification of the tree's own build_variables.bzl, globs expanded."""
    bvars = tree / "build_variables.bzl"
    if not bvars.is_file():
        raise TorchsplitError("no build_variables.bzl: not a PyTorch source tree", str(tree))
    evaluation = evaluate(str(bvars))
    ruleset = load_rules(None)
    expand_globs(evaluation, ruleset, files)
    result = classify(evaluation, ruleset, source_tree=tree)
    return result, ruleset, evaluation


def _copy_tree(tree: Path, dest: Path) -> None:
    def ignore(directory: str, names: list[str]) -> list[str]:
        return [STAMP, ".git"] if Path(directory) == tree else [".git"]

    shutil.copytree(tree, dest, symlinks=True, ignore=ignore, dirs_exist_ok=True)


def build_overlay(
    tree_files_before: list[str],
    tree_files_after: list[str],
    result: Classification,
    ruleset: RuleSet,
    evaluation: object,
    plan: moves.Plan,
    include_tree: Path,
    version: str,
    upstream_bazelignore: str = "",
) -> dict[str, str]:
    """Every file the overlay commit writes, relative to the repository root."""
    moved = plan.mapping()
    groups = moves.header_groups(plan.moves, ruleset)
    c10_label = f"//{overlay.CUDA_PACKAGE}:c10_cuda"
    c10_groups = [g for g in groups if g.target == c10_label]
    if len(c10_groups) != 1:
        raise TorchsplitError(
            f"expected c10/cuda's headers in one include mapping, found {len(c10_groups)}: "
            "this tree's c10/cuda is not laid out as PyTorch 2.x's"
        )
    target = ruleset.target_by_label(c10_label)
    assert target is not None
    custom = {c10_label: overlay.c10_cuda_target(c10_groups[0], plan.moves, target.variable)}
    emitted = emit.render_all(
        result,
        evaluation,
        ruleset,
        moved=moved,
        groups=groups,
        custom=custom,  # type: ignore[arg-type]
    )
    emitted.update(
        moves.render_plan(result, ruleset, include_tree=include_tree, files=tree_files_before)
    )
    files: dict[str, str] = {}
    for rel, text in emitted.items():
        if rel.startswith("overlay/"):
            files[rel[len("overlay/") :]] = text
        elif rel.endswith(".bzl"):
            files[rel] = text
        else:
            files[f"torchsplit/{rel}"] = text
    cuda_build = f"{overlay.CUDA_PACKAGE}/BUILD.bazel"
    files[cuda_build] = files[cuda_build].replace(
        'load("@rules_cuda//cuda:defs.bzl", "cuda_library")\n',
        'load("@rules_cuda//cuda:defs.bzl", "cuda_library", "requires_cuda")\n'
        'load("//c10/macros:cmake_configure_file.bzl", "cmake_configure_file")\n',
    )
    files.update(overlay.project_files(version))
    files.update(overlay.data_files())
    files["WORKSPACE"] = overlay.WORKSPACE
    files[".bazelrc"] = overlay.BAZELRC
    files[".bazelignore"] = overlay.bazelignore(upstream_bazelignore)
    files[".gitignore"] = overlay.GITIGNORE
    for package in ("c10", *overlay.C10_PACKAGES):
        files[f"{package}/BUILD.bazel"] = overlay.c10_build(package)
    tops = sorted(
        {
            f.split("/", 1)[0]
            for f in tree_files_after
            if "/" in f and f.startswith(("aten/", "torch/"))
        }
    )
    files["BUILD.bazel"] = overlay.root_build(tops)
    return files


# torchsplit's files that shape a restructured tree: a change to any makes a new one.
_SHAPING = (
    "tools/python/torchsplit/reorg",
    "tools/python/torchsplit/upstream",
    "tools/repos",
    "tools/layering",
    "tools/cuda",
    "tools/bazel",
    ".bazeliskrc",
    ".bazelversion",
)
SUMMARY = ".git/torchsplit-summary.json"


def fingerprint(tree: Path, label: str, version: str) -> str:
    """What the result depends on: the fetched tarball's hash (from the tree's stamp) and
    torchsplit's shaping files. Empty for a tree without a stamp (its files may change
    unseen): it is restructured every time."""
    stamp = read_stamp(tree)
    if not stamp.get("sha256"):
        return ""
    digest = hashlib.sha256(f"{stamp['sha256']}\0{label}\0{version}\0".encode())
    for top in _SHAPING:
        base = overlay.PROJECT / top
        paths = [base] if base.is_file() else sorted(base.rglob("*"))
        for path in paths:
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(path.relative_to(overlay.PROJECT).as_posix().encode() + b"\0")
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def reusable(out: Path, print_: str) -> Summary | None:
    """The summary of ``out`` when it is this very restructure, untouched since."""
    try:
        record = json.loads((out / SUMMARY).read_text(encoding="utf-8"))
        mark = json.loads((out / MARK).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if record.get("fingerprint") != print_:
        return None
    head = _git(out, "rev-parse", "HEAD", check=False).stdout.strip()
    status = _git(out, "status", "--porcelain", check=False)
    if status.returncode != 0 or status.stdout.strip() or head != mark.get("head"):
        return None
    data = dict(record["summary"])
    data["out"] = Path(data["out"])
    data["commits"] = [tuple(c) for c in data["commits"]]
    return Summary(**data)


def restructure(
    tree: Path,
    out: Path,
    *,
    label: str,
    version: str = "",
    force: bool = False,
    say: Say = lambda _: None,
) -> Summary:
    """Restructure the source ``tree`` into the git repository ``out`` (see the module
    docstring). ``label`` names the input in the first commit's message; ``version``
    picks the torch_patches and the judged couplings (none for an unknown version)."""
    if not tree.is_dir():
        raise TorchsplitError("no such directory (the source tree)", str(tree))
    print_ = fingerprint(tree, label, version)
    if print_ and not force:
        kept = reusable(out, print_)
        if kept is not None:
            say(f"{out} is already this restructure (same tree, same torchsplit): kept")
            return kept
    say(f"reading {tree}")
    files = tree_files(tree)
    result, ruleset, evaluation = classify_tree(tree, files)
    plan = moves.plan(result, ruleset, files)
    if plan.problems:
        raise TorchsplitError("the move plan has conflicts:\n" + "\n".join(plan.problems))
    summary = Summary(out=out, files=len(files))

    def build(repo: Path) -> None:
        say(f"copying {len(files)} files into a new git repository")
        _copy_tree(tree, repo)
        _git(repo, "init", "-q", "-b", "main")
        _commit(repo, f"{label}, as released\n\nThe source tree, unchanged.", summary)

        say(f"git mv of {len(plan.moves)} files (moves.tsv)")
        git_mv(repo, plan.moves)
        summary.moved = len(plan.moves)
        summary.followed = sum(1 for m in plan.moves if m.source not in result.decisions)
        _commit(
            repo,
            f"Move {len(plan.moves)} files into third_device/ (torchsplit/moves.tsv)\n\n"
            "Only renames: `git log --follow` keeps every file's history. The reasons are\n"
            "in torchsplit/moves.tsv, written by the overlay commit.",
            summary,
        )

        applied = patches_for(version)
        patch_dir = repo / PATCH_DIR
        patch_dir.mkdir(parents=True, exist_ok=True)
        for name, text in applied:
            (patch_dir / name).write_text(text, encoding="utf-8")
            check = _git(repo, "apply", "--check", str(patch_dir / name), check=False)
            if check.returncode != 0:
                raise TorchsplitError(
                    f"torch_patches/{name} does not apply:\n{check.stderr.strip()}"
                )
            _git(repo, "apply", str(patch_dir / name))
            say(f"applied torch_patches/{name}")
        summary.patches = [name for name, _ in applied]
        if applied:
            _commit(
                repo,
                f"Apply {len(applied)} torch_patches ({PATCH_DIR})\n\n"
                + "".join(f"- {name}\n" for name in summary.patches),
                summary,
            )

        for rel in plan.superseded:
            _git(repo, "rm", "-q", rel)
        after = tree_files(repo)
        files_now = build_overlay(files, after, result, ruleset, evaluation, plan, tree, version)
        for rel, text in files_now.items():
            dest = repo / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, encoding="utf-8")
            if rel in overlay.EXECUTABLE or rel.endswith("/moves.sh"):
                dest.chmod(0o755)
        summary.overlay_files = len(files_now)
        summary.superseded = list(plan.superseded)
        summary.left_behind = len(plan.left_behind)
        summary.targets = {k: len(v) for k, v in result.by_target().items()}
        _commit(
            repo,
            "Bazel overlay of the split (torchsplit upstream restructure)\n\n"
            "Targets name the post-move paths; moved headers keep their include spelling\n"
            "through header libraries (include_prefix); c10/cuda compiles in\n"
            "//third_device/torch_cuda:c10_cuda. Superseded upstream Bazel files of moved\n"
            "directories are removed: " + ", ".join(plan.superseded or ["none"]) + ".",
            summary,
        )
        if print_:
            record = {"fingerprint": print_, "summary": asdict(summary) | {"out": str(out)}}
            (repo / SUMMARY).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")

    replace_directory(out, build, force=force, kind="restructured PyTorch repository", mark=MARK)
    return summary
