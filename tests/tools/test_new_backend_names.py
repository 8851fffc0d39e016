"""`torchsplit new-backend`'s naming: every token renamed, collisions found, no Bazel."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from builds import REPO
from torchsplit.backend import generate, naming, verify
from torchsplit.checkout import copy_checkout, git, snapshot
from torchsplit.cli import main
from torchsplit.errors import TorchsplitError

EMU = naming.BackendNames("torch_emu", "emu", "_EMUC", "eccl")


def test_defaults_follow_the_template_shape() -> None:
    names = naming.derive("torch_acme", None, None)
    assert names == naming.BackendNames("torch_acme", "acme", "_ACMEC", "accl")
    assert names.env_prefix == "TORCH_ACME_"
    assert naming.read_template(REPO, "torch_emu") == EMU


def test_whole_tokens_are_renamed_and_words_containing_them_are_not() -> None:
    rules = naming.renames(EMU, naming.derive("torch_acme", None, None))
    text = (
        'torch_emu._EMUC registers "emu" (emu:0, EmuDriver, kEmuType, TORCH_EMU_DEVICES); '
        "eccl/EcclBackend: an emulated device"
    )
    assert naming.apply(text, rules) == (
        'torch_acme._ACMEC registers "acme" (acme:0, AcmeDriver, kAcmeType, TORCH_ACME_DEVICES); '
        "accl/AcclBackend: an emulated device"
    )


def test_the_rendered_copy_keeps_no_template_token() -> None:
    files = generate.render(REPO, EMU, naming.derive("torch_acme", None, None))
    assert "csrc/framework/AcmeDriver.cpp" in files and "torch_acme/testing.py" in files
    for rel, text in files.items():
        for token in ("torch_emu", "_EMUC", "eccl", "Eccl", "EmuDriver", "TORCH_EMU", "'emu'"):
            assert token not in text, (rel, token)
    assert 'extension = "_ACMEC"' in files["BUILD.bazel"]
    assert "torch_acme_framework_sources" in files["build_variables.bzl"]


def test_collisions_name_the_holder() -> None:
    taken = naming.taken_names(REPO)
    problems = naming.collisions(naming.derive("torch_x", "emu", "_CUDAC", "eccl"), taken)
    # Each names the holder and the option that picks another name.
    assert problems == [
        "device type 'emu' is already held by torch_emu (choose --device-name)",
        "extension '_CUDAC' is already held by torch_cuda (choose --extension)",
        "process-group backend 'eccl' is already held by torch_emu (choose --collective-name)",
    ]
    assert naming.collisions(naming.derive("torch_x", "cpu", None), taken)[0].startswith(
        "device type 'cpu' is already held by torch_core"
    )


def test_bad_names_and_existing_backends_are_refused_without_changes(capsys) -> None:
    with pytest.raises(TorchsplitError, match="must be a lowercase identifier"):
        naming.derive("Torch-Acme", None, None)
    before = sorted(p.name for p in (REPO / "third_device").iterdir())
    assert main(["new-backend", "torch_emu", "--workspace", str(REPO)]) == 2
    assert "backend torch_emu exists already" in capsys.readouterr().err
    assert main(["new-backend", "torch_y", "--device-name", "cuda", "--workspace", str(REPO)]) == 2
    err = capsys.readouterr().err
    assert "device type 'cuda' is already held by torch_cuda" in err
    assert sorted(p.name for p in (REPO / "third_device").iterdir()) == before


def test_the_collective_name_avoids_taken_ones_or_is_chosen() -> None:
    # The in-tree holders (not the tree itself: a torch_acme made by hand holds accl).
    held = {"eccl": "torch_emu", "nccl": "torch_cuda", "tcp": "torch_core"}
    assert {
        k: v for k, v in naming.taken_names(REPO)["process-group backend"].items() if k in held
    } == held
    taken = {"process-group backend": held}
    # torch_emu holds eccl, torch_cuda nccl: the default falls back to <device>ccl.
    assert naming.derive("torch_ecu", None, None, taken=taken).pg_backend == "ecuccl"
    assert naming.derive("torch_npx", None, None, taken=taken).pg_backend == "npxccl"
    assert naming.derive("torch_amd", None, None, taken=taken).pg_backend == "accl"
    assert naming.derive("torch_ecu", None, None, "xccl", taken).pg_backend == "xccl"
    with pytest.raises(TorchsplitError, match="collective name 'X-ccl' must be"):
        naming.derive("torch_ecu", None, None, "X-ccl", taken)


def test_a_derived_backends_device_type_is_taken() -> None:
    # torch_hip's Python is translated at build time: its device type comes from
    # torch_cuda's, renamed by its RENAMES.
    assert naming.taken_names(REPO)["device type"]["hip"] == "torch_hip"
    assert naming.read_derived(REPO, "torch_hip") == naming.BackendNames(
        "torch_hip", "hip", "_HIPC", ""
    )


def test_copies_describe_the_vendors_accelerator_not_an_emulated_one() -> None:
    files = generate.render(REPO, EMU, naming.derive("torch_acme", None, None))
    for rel, text in files.items():
        assert "emulated accelerator" not in text, rel
    assert (
        'summary = "torchsplit\'s acme accelerator backend (device type acme)"'
        in files["BUILD.bazel"]
    )
    # The extension exports only its init function, like torch_cuda's (_CUDAC.lds).
    assert "PyInit__ACMEC;" in files["_ACMEC.lds"]
    assert "--version-script=$(location _ACMEC.lds)" in files["BUILD.bazel"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["torch_musa", "--from", "torch_cuda"],
            "derive from it instead: --from torch_cuda --translate hip",
        ),
        (["torch_musa", "--from", "torch_hip"], "torch_hip is derived from torch_cuda"),
        (["torch_musa", "--translate", "hip"], "no backend in DERIVED_BACKENDS"),
        (["torch_ecu"], None),  # a free name: refused only by the fake template below
    ],
)
def test_refusals_write_nothing(
    tmp_path: Path, capsys, argv: list[str], message: str | None
) -> None:
    if message is None:
        argv = [*argv, "--from", "torch_nope"]
        message = "no template backend third_device/torch_nope"
    before = sorted(str(p) for p in (REPO / "third_device").rglob("*"))
    policy = (REPO / generate.POLICY).read_text()
    assert main(["new-backend", *argv, "--workspace", str(REPO)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert sorted(str(p) for p in (REPO / "third_device").rglob("*")) == before
    assert (REPO / generate.POLICY).read_text() == policy


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    copy_checkout(REPO, root)
    snapshot(root)
    return root


def _fail(*_: object) -> None:
    raise TorchsplitError("layering audit failed: (injected)")


@pytest.mark.parametrize("translate", [False, True])
def test_a_failed_verification_leaves_the_tree_as_it_was(
    checkout: Path, monkeypatch, capsys, translate: bool
) -> None:
    """A build that fails (before the move) or an audit that fails (after it)."""
    argv = ["new-backend", "torch_zed", "--workspace", str(checkout)]
    argv += ["--from", "torch_cuda", "--translate", "hip"] if translate else []
    scratch = checkout.parent / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", None)

    def no_bazel(root: Path, scratch_root: Path, names: naming.BackendNames, say) -> None:
        # What Bazel would read: the new package, and the policy naming a derived one.
        assert (scratch_root / "third_device" / names.package / "BUILD.bazel").is_file()
        assert not (root / "third_device" / names.package).exists()
        if translate:
            policy = (scratch_root / generate.POLICY).read_text()
            assert '"torch_zed": {\n        "from": "torch_cuda"' in policy
        raise TorchsplitError("Bazel build failed: (injected)")

    monkeypatch.setattr(verify, "verify_scratch", no_bazel)
    assert main(argv) == 2
    assert "nothing was written (the tree is as it was)" in capsys.readouterr().err
    assert git(checkout, "status", "--porcelain", "--untracked-files=all") == ""
    assert list(scratch.iterdir()) == []

    monkeypatch.setattr(verify, "verify_scratch", lambda *_: None)
    monkeypatch.setattr(verify, "verify_in_place", _fail)
    assert main(argv) == 2
    assert "layering audit failed: (injected)" in capsys.readouterr().err
    assert git(checkout, "status", "--porcelain", "--untracked-files=all") == ""
    assert list(scratch.iterdir()) == []

    monkeypatch.setattr(verify, "verify_in_place", lambda *_: None)
    assert main(argv) == 0
    status = git(checkout, "status", "--porcelain", "--untracked-files=all").splitlines()
    changed = {"/".join(line[3:].split("/")[:2]) for line in status}
    wanted = {"third_device/torch_zed", "BUILD.bazel"}  # the root's //:all_files label
    wanted |= {"tools/layering", "MODULE.bazel"} if translate else set()
    assert changed == wanted, status
