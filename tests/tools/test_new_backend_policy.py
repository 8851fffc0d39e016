"""A derived backend's central grant (policy_edit.py): the layering policy's DERIVED_BACKENDS
and TOOLKITS entries, MODULE.bazel's toolkit visibility, written all or nothing. No Bazel."""

from __future__ import annotations

import difflib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import starlark as sl

from builds import REPO
from torchsplit.audit.policy import Toolkit, load_policy, parse_policy
from torchsplit.backend import generate, policy_edit, verify
from torchsplit.checkout import copy_checkout, git, snapshot
from torchsplit.cli import main
from torchsplit.errors import TorchsplitError

sys.path.insert(0, str(REPO / "tests" / "bazel"))

from bazel_files import drift, read_module, read_workspace

MUSA = policy_edit.Grant("torch_musa", "torch_hip", "torch_cuda", ("hipify_sources",))
HIP_REPOS = ("hipify_mappings", "local_hip", "rules_hip")


def _policy_text() -> str:
    return (REPO / policy_edit.POLICY).read_text()


def _rules(policy_text: str, expr: str) -> object:
    """`expr` evaluated over tools/layering/rules.bzl with `policy_text` as its policy.bzl."""

    def load(_: str) -> sl.FrozenModule:
        module = sl.Module()
        ast = sl.parse("policy.bzl", policy_text, sl.Dialect.extended())
        sl.eval(module, ast, sl.Globals.standard())
        return module.freeze()

    module = sl.Module()
    text = (REPO / "tools/layering/rules.bzl").read_text() + f"\nRESULT = {expr}\n"
    sl.eval(module, sl.parse("rules.bzl", text, sl.Dialect.extended()),
            sl.Globals.standard(), sl.FileLoader(load))  # fmt: skip
    return module["RESULT"]


def test_the_edit_grants_the_models_toolkit_and_names_the_derivation() -> None:
    before = load_policy(REPO / policy_edit.POLICY)
    text, after = policy_edit.edit_policy(_policy_text(), MUSA)
    assert after.toolkits["torch_musa"] == before.toolkits["torch_hip"]
    assert after.toolkits["torch_musa"] == Toolkit(HIP_REPOS, ("rocm",))
    assert after.derived["torch_musa"] == ("torch_cuda", ("hipify_sources",))
    # Nothing else changed: the other entries are the same, and the diff only adds lines.
    assert {k: v for k, v in after.toolkits.items() if k != "torch_musa"} == before.toolkits
    assert {k: v for k, v in after.derived.items() if k != "torch_musa"} == before.derived
    diff = list(difflib.ndiff(_policy_text().splitlines(), text.splitlines()))
    assert not [line for line in diff if line.startswith("- ")]
    assert sum(line.startswith("+ ") for line in diff) == 4 + 9  # the two entries
    assert after.allowed_repositories("third_device/torch_musa/csrc") == (
        before.allowed_repositories("third_device/torch_hip/csrc")
    )
    assert after.vendors_of("backend", "torch_musa") == ("rocm",)


def test_the_edited_policy_still_loads_in_rules_bzl_as_the_aspect_reads_it() -> None:
    text, after = policy_edit.edit_policy(_policy_text(), MUSA)
    hip, musa = (f"@//third_device/{b}:__subpackages__" for b in ("torch_hip", "torch_musa"))
    for repo in HIP_REPOS:
        assert _rules(text, f'toolkit_visibility("{repo}")') == [hip, musa]
        assert after.toolkit_visibility(repo) == [hip, musa]
    assert _rules(text, 'toolkit_visibility("local_cuda")') == [
        "@//third_device/torch_cuda:__subpackages__"
    ]
    assert _rules(text, 'derived_readers("torch_cuda")') == [
        "//third_device/torch_hip:__pkg__",
        "//third_device/torch_musa:__pkg__",
    ]
    assert _rules(text, 'derived_from("torch_musa")') == ["torch_cuda", ["hipify_sources"]]
    assert "local_hip" in _rules(text, 'allowed_repositories("", "third_device/torch_musa")')


@pytest.mark.skipif(
    not (REPO / "node_modules/.bin/buildifier").exists(),
    reason="no buildifier (tools/dev bootstrap)",
)
def test_the_edited_policy_is_formatted_as_lint_wants(tmp_path: Path) -> None:
    edited = tmp_path / "policy.bzl"
    edited.write_text(policy_edit.edit_policy(_policy_text(), MUSA)[0])
    module = tmp_path / "MODULE.bazel"
    module.write_text(
        policy_edit.sync_module(
            (REPO / "MODULE.bazel").read_text(), policy_edit.edit_policy(_policy_text(), MUSA)[1]
        )
    )
    tool = str(REPO / "node_modules/.bin/buildifier")
    config = f"-config={REPO / '.buildifier.json'}"
    proc = subprocess.run(
        [tool, config, "-mode=check", "-lint=warn", str(edited), str(module)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_edit_is_refused_twice_and_without_a_model_entry() -> None:
    text, _ = policy_edit.edit_policy(_policy_text(), MUSA)
    with pytest.raises(TorchsplitError, match="DERIVED_BACKENDS already has torch_musa"):
        policy_edit.edit_policy(text, MUSA)
    # A stale TOOLKITS entry alone is refused too.
    toolkits_only = policy_edit.add_entry(
        _policy_text(), "TOOLKITS", "torch_musa", policy_edit.toolkit_entry(_policy_text(), MUSA)
    )
    with pytest.raises(TorchsplitError, match="TOOLKITS already has torch_musa"):
        policy_edit.edit_policy(toolkits_only, MUSA)
    orphan = policy_edit.Grant("torch_musa", "torch_emu", "torch_cuda", ("hipify_sources",))
    with pytest.raises(TorchsplitError, match="TOOLKITS has no entry for torch_emu"):
        policy_edit.edit_policy(_policy_text(), orphan)
    with pytest.raises(TorchsplitError, match="no DERIVED_BACKENDS"):
        policy_edit.add_entry("X = 1\n", "DERIVED_BACKENDS", "a", '    "a": 1,\n')


def test_module_bazel_follows_the_policy_and_matches_workspace(tmp_path: Path) -> None:
    """WORKSPACE reads toolkit_visibility() from the policy; MODULE.bazel is rewritten from it:
    with the edited policy in place the drift test finds nothing."""
    text, policy = policy_edit.edit_policy(_policy_text(), MUSA)
    module = policy_edit.sync_module((REPO / "MODULE.bazel").read_text(), policy)
    assert module != (REPO / "MODULE.bazel").read_text()
    assert policy_edit.sync_module(module, policy) == module  # idempotent
    (tmp_path / "tools").mkdir()
    shutil.copytree(REPO / "tools/layering", tmp_path / "tools/layering")
    (tmp_path / policy_edit.POLICY).write_text(text)
    shutil.copy2(REPO / "WORKSPACE", tmp_path / "WORKSPACE")
    (tmp_path / "MODULE.bazel").write_text(module)
    workspace = read_workspace(tmp_path / "WORKSPACE")
    assert drift(workspace, read_module(tmp_path / "MODULE.bazel")) == []
    # The old MODULE.bazel no longer matches: the test would catch a forgotten sync.
    problems = drift(workspace, read_module(REPO / "MODULE.bazel"))
    assert any("local_hip" in p and "torch_musa" in p for p in problems), problems
    # The CUDA toolkit's lists are untouched.
    assert module.count("@//third_device/torch_cuda:__subpackages__") == 2


def test_apply_restores_every_file_when_one_write_fails(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "tools/layering").mkdir(parents=True)
    (tmp_path / "third_device").mkdir()
    (tmp_path / policy_edit.POLICY).write_text(_policy_text())
    (tmp_path / "MODULE.bazel").write_text((REPO / "MODULE.bazel").read_text())
    edits = policy_edit.grant_derived(tmp_path, MUSA)
    assert set(edits) == {policy_edit.POLICY, "MODULE.bazel"}
    real = policy_edit.write_output

    def failing(path: Path, text: str) -> None:
        if Path(path).name == "MODULE.bazel":
            raise TorchsplitError("cannot write: disk full (injected)", str(path))
        real(path, text)

    monkeypatch.setattr(policy_edit, "write_output", failing)
    with pytest.raises(TorchsplitError, match="injected"):
        generate.install(tmp_path, "torch_musa", {"BUILD.bazel": ""}, edits)
    assert (tmp_path / policy_edit.POLICY).read_text() == _policy_text()
    assert (tmp_path / "MODULE.bazel").read_text() == (REPO / "MODULE.bazel").read_text()
    assert list((tmp_path / "third_device").iterdir()) == []

    monkeypatch.setattr(policy_edit, "write_output", real)
    changed, old = generate.install(tmp_path, "torch_musa", {"BUILD.bazel": ""}, edits)
    assert changed == ["third_device/torch_musa/", policy_edit.POLICY, "MODULE.bazel"]
    assert (tmp_path / policy_edit.POLICY).read_text() == edits[policy_edit.POLICY]
    generate.uninstall(tmp_path, "torch_musa", old)
    assert (tmp_path / policy_edit.POLICY).read_text() == _policy_text()
    assert (tmp_path / "MODULE.bazel").read_text() == (REPO / "MODULE.bazel").read_text()
    assert list((tmp_path / "third_device").iterdir()) == []


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "checkout"
    copy_checkout(REPO, root)
    snapshot(root)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", None)
    return root


def test_new_backend_writes_the_grant_and_refuses_a_stale_one(
    checkout: Path, monkeypatch, capsys
) -> None:
    seen: dict[str, str] = {}

    def scratch_policy(root: Path, scratch: Path, names, say) -> None:  # type: ignore[no-untyped-def]
        # Bazel, run from the scratch root, reads the edited policy there.
        seen["policy"] = (scratch / policy_edit.POLICY).read_text()
        assert not (root / "third_device" / names.package).exists()

    monkeypatch.setattr(verify, "verify_scratch", scratch_policy)
    monkeypatch.setattr(verify, "verify_in_place", lambda *_: None)
    argv = ["new-backend", "torch_musa", "--from", "torch_cuda", "--translate", "hip"]
    argv += ["--workspace", str(checkout)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "DERIVED_BACKENDS and TOOLKITS gain torch_musa" in out
    assert "MODULE.bazel: toolkit visibility kept in step" in out
    status = git(checkout, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert {line[3:] for line in status if not line[3:].startswith("third_device/")} == {
        policy_edit.POLICY, "MODULE.bazel", "BUILD.bazel"
    }  # fmt: skip
    assert '"//third_device/torch_musa:all_files",' in (checkout / "BUILD.bazel").read_text()
    assert seen["policy"] == (checkout / policy_edit.POLICY).read_text()
    policy = load_policy(checkout / policy_edit.POLICY)
    assert policy.toolkits["torch_musa"] == policy.toolkits["torch_hip"]
    assert (
        drift(read_workspace(checkout / "WORKSPACE"), read_module(checkout / "MODULE.bazel")) == []
    )

    # Again: the backend exists. With its directory removed by hand: the stale entries.
    assert main(argv) == 2
    assert "backend torch_musa exists already" in capsys.readouterr().err
    shutil.rmtree(checkout / "third_device" / "torch_musa")
    before = git(checkout, "status", "--porcelain", "--untracked-files=all")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("torchsplit: error: ") and "Traceback" not in err
    assert "DERIVED_BACKENDS already has torch_musa (with no third_device/torch_musa)" in err
    assert git(checkout, "status", "--porcelain", "--untracked-files=all") == before


def test_parse_policy_names_the_text_it_was_given() -> None:
    with pytest.raises(TorchsplitError, match=r"edited\.bzl: cannot evaluate"):
        parse_policy("TOOLKITS = {\n", "edited.bzl")
