"""`torchsplit new-backend`'s naming: every token renamed, collisions found, no Bazel."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsplit.backend import generate, naming
from torchsplit.cli import main
from torchsplit.errors import TorchsplitError

REPO = Path(__file__).resolve().parents[2]
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
