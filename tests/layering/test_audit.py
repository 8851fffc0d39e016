"""`torchsplit audit` on the real repository (the CI gate) and its failure modes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builds import REPO


def torchsplit(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(REPO / "tools" / "torchsplit"), *args],
        cwd=cwd,
        env={**os.environ, "TORCHSPLIT_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.mark.bazel
def test_clean_repository_audits_clean() -> None:
    """CI: the audit runs on every `tools/dev test` and fails it on any violation."""
    proc = torchsplit("audit", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is True
    assert report["violations"] == [] and report["visibility"] == [] and report["headers"] == []
    assert report["repositories"] == [] and report["findings"] == []
    assert report["artifacts_read"] >= 2  # libtorch_core.so and _C.so at least (built first)
    rules = {p["rule"] for p in report["pairs"]}
    assert {"core-to-backend", "core-to-toolkit"} <= rules
    backends = [d.name for d in (REPO / "third_device").iterdir() if (d / "BUILD.bazel").exists()]
    assert sum(p["rule"] == "backend-to-backend" for p in report["pairs"]) == len(backends) * (
        len(backends) - 1
    )


def test_bazel_failure_exits_2_with_its_error(tmp_path: Path) -> None:
    fake = tmp_path / "bazel"
    fake.write_text("#!/bin/sh\necho 'ERROR: Skipping //x: no such package' >&2\nexit 7\n")
    fake.chmod(0o755)
    proc = torchsplit("audit", "--bazel", str(fake))
    assert proc.returncode == 2
    assert "torchsplit: error:" in proc.stderr
    assert "ERROR: Skipping //x: no such package" in proc.stderr


def test_empty_query_results_are_read_from_stdout(tmp_path: Path) -> None:
    """An empty result exits 0 with INFO: Empty results on stderr: that is "no violation"."""
    fake = tmp_path / "bazel"
    fake.write_text(
        "#!/bin/sh\n"
        'case "$2" in //...) echo core; echo third_device/torch_cuda;; esac\n'
        "echo 'INFO: Empty results' >&2\nexit 0\n"
    )
    fake.chmod(0o755)
    proc = torchsplit("audit", "--bazel", str(fake), "--no-headers", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ok"] is True
