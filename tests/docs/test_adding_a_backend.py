"""docs/adding-a-backend.md, followed as a vendor would: every command block of the guide, in order.

The guide's ```sh blocks are read from the page itself and run one line at a time
(bash, from the root of a scratch copy of the checkout), so a command the guide
shows and the tool do not do fails here. What each command must have done is then
checked where the guide says what it does. Slow (Bazel in a fresh output base;
the project's remote cache, read-only, when one is running): marked `bazel`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from builds import REPO, Bazel
from torchsplit.checkout import copy_checkout, git, snapshot

pytestmark = pytest.mark.bazel

GUIDE = REPO / "docs" / "adding-a-backend.md"


def guide_commands(text: str) -> list[str]:
    """Every command line of the page's ```sh blocks, in order."""
    blocks = re.findall(r"^```sh\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def _bash(root: Path, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", command],
        cwd=root,
        env={k: v for k, v in os.environ.items() if k != "TORCH_CORE_NO_AUTOLOAD"},
        capture_output=True,
        text=True,
        timeout=3600,
    )


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("guide") / "checkout"
    copy_checkout(REPO, root)
    shutil.rmtree(root / "third_device" / "torch_acme", ignore_errors=True)
    # The checkout's npm tools (tools/dev would otherwise run npm ci), its personal
    # Bazel settings, and the project's cache when one runs (read-only: a scratch
    # build must not write it).
    (root / "node_modules").symlink_to(REPO / "node_modules")
    settings = (REPO / "user.bazelrc").read_text() if (REPO / "user.bazelrc").exists() else ""
    cache = subprocess.run(
        [str(REPO / "tools" / "cache"), "status"], capture_output=True, check=False
    )
    if cache.returncode == 0:
        settings += "build --config=remote-cache-ro\n"
    (root / "user.bazelrc").write_text(settings)
    snapshot(root)
    yield root
    _bash(root, "node_modules/.bin/bazelisk shutdown")


def test_the_guide_has_commands() -> None:
    commands = guide_commands(GUIDE.read_text())
    assert any(c.startswith("tools/torchsplit new-backend torch_acme") for c in commands)
    assert any("pytest tests/conformance" in c for c in commands)


def test_every_command_of_the_guide_runs(checkout: Path) -> None:
    outputs: dict[str, str] = {}
    for command in guide_commands(GUIDE.read_text()):
        start = time.monotonic()
        proc = _bash(checkout, command)
        print(f"{time.monotonic() - start:6.1f} s  {command}")
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, f"`{command}` exited {proc.returncode}:\n{out[-4000:]}"
        outputs[command] = out
        if command.startswith("tools/torchsplit new-backend torch_acme"):
            # The new backend's directory and, as the guide says, its label in the root
            # BUILD.bazel's //:all_files: nothing else.
            status = git(checkout, "status", "--porcelain", "--untracked-files=all").splitlines()
            assert " M BUILD.bazel" in status, status
            others = [line for line in status if line != " M BUILD.bazel"]
            assert others, "new-backend wrote no backend"
            assert all(line[3:].startswith("third_device/torch_acme/") for line in others), status

    def output(prefix: str) -> str:
        (found,) = [out for command, out in outputs.items() if command.startswith(prefix)]
        return found

    assert "acme:0 [2.0, 2.0, 2.0]" in output("tools/torchsplit new-backend torch_acme")
    built = output("tools/dev build")
    assert re.search(r"built core and backends \S*torch_acme", built), built[-2000:]
    assert "PASSED" in output("node_modules/.bin/bazelisk test //third_device/torch_acme:")
    narrowed = output("TORCHSPLIT_CONFORMANCE_BACKENDS=torch_acme ")
    assert " acme " in narrowed and "FAIL" not in narrowed
    # Right after tools/dev build, every backend's column: fake and acme included,
    # each either passing or skipped with its reason, none erroring.
    table = output("~/.cache/torchsplit/venv/bin/python -m pytest tests/conformance")
    header = next(line for line in table.splitlines() if line.startswith("capability "))
    assert header.split()[1:3] == ["cpu", "fake"] and "acme" in header.split(), header
    assert "FAIL" not in table and not re.search(r"\d+ error", table), table[-3000:]


def test_the_entry_point_shown_is_the_one_the_build_declares(bazel: Bazel) -> None:
    """The guide's entry point for torch_acme has the shape the build gives torch_emu."""
    match = re.search(
        r'\[project\.entry-points\."torch_core\.backends"\]\n(\w+) = "(\w+)"', GUIDE.read_text()
    )
    assert match, "the guide no longer shows the entry point"
    bazel.run("build", "//third_device/torch_emu:dev_dist_info")
    declared = (
        REPO / "bazel-bin/third_device/torch_emu/torch_emu-0.1.0.dist-info/entry_points.txt"
    ).read_text()
    emu = declared.replace("emu", "acme")
    assert f"{match.group(1)} = {match.group(2)}" in emu, (match.group(0), declared)
