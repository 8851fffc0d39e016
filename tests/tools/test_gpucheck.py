"""tools/dev gpu-check (torchsplit.gpucheck): its passes, their selection and sequencing.

The passes run against a fake pytest that records what it was given and
exits as told, so the sequencing is checked here, without a GPU: every pass
runs whatever the earlier ones returned, and the exit code combines them.
The selection is checked with pytest's own collection of tests/.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from builds import REPO, cuda_extension_built
from torchsplit.gpucheck import environment_report
from torchsplit.gpucheck.__main__ import main
from torchsplit.gpucheck.passes import PASSES

FAKE_PYTEST = textwrap.dedent(
    """
    import json, os, sys
    markers = sys.argv[sys.argv.index("-m") + 1]
    record = {
        "markers": markers,
        "launch_blocking": os.environ.get("CUDA_LAUNCH_BLOCKING"),
        "require_gpu": os.environ.get("TORCH_CUDA_REQUIRE_GPU"),
        "module_loading": os.environ.get("CUDA_MODULE_LOADING"),
    }
    with open(os.environ["FAKE_PYTEST_LOG"], "a") as log:
        log.write(json.dumps(record) + "\\n")
    sys.exit(json.loads(os.environ["FAKE_PYTEST_CODES"])[markers])
    """
)


def _run_with_fake_pytest(
    tmp_path: Path, codes: dict[str, int], env: dict[str, str] | None = None
) -> tuple[int, list[dict[str, str | None]]]:
    fake = tmp_path / "fake_pytest.py"
    fake.write_text(FAKE_PYTEST)
    log = tmp_path / "runs.jsonl"
    environ = {
        **(env or {}),
        "FAKE_PYTEST_LOG": str(log),
        "FAKE_PYTEST_CODES": json.dumps(codes),
        "PATH": os.environ.get("PATH", ""),
    }
    code = main(
        [],
        report=lambda: ["cuda:0: a stand-in device"],
        command=lambda p: [sys.executable, str(fake), "-m", p.markers],
        environ=environ,
    )
    runs = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return code, runs


BLOCKING, NORMAL = (p.markers for p in PASSES)


@pytest.mark.parametrize(
    ("blocking", "normal", "expected"),
    [(0, 0, 0), (1, 0, 1), (0, 1, 1), (1, 1, 1), (5, 0, 1)],
)
def test_every_pass_runs_and_the_exit_code_combines_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], blocking: int, normal: int, expected: int
) -> None:
    code, runs = _run_with_fake_pytest(tmp_path, {BLOCKING: blocking, NORMAL: normal})
    # Both passes ran, in order, even when the first failed (the old
    # `set -e` script stopped after it and exited 1 on every GPU).
    assert [r["markers"] for r in runs] == [BLOCKING, NORMAL]
    assert code == expected
    out = capsys.readouterr().out
    assert out.index("pass 1/2: blocking") < out.index("pass 2/2: normal")
    for name, rc in (("blocking", blocking), ("normal", normal)):
        assert (f"{name}: passed" if rc == 0 else f"{name}: FAILED (pytest exited {rc})") in out


def test_each_pass_gets_its_own_launch_mode_and_the_users_environment(tmp_path: Path) -> None:
    # The user asked for launch blocking and lazy loading: the normal pass
    # still runs asynchronously; the module loading stays the user's.
    user = {"CUDA_LAUNCH_BLOCKING": "1", "CUDA_MODULE_LOADING": "LAZY"}
    code, runs = _run_with_fake_pytest(tmp_path, {BLOCKING: 0, NORMAL: 0}, user)
    assert code == 0
    blocking, normal = runs
    assert blocking["launch_blocking"] == "1" and normal["launch_blocking"] is None
    assert blocking["require_gpu"] == normal["require_gpu"] == "1"
    assert blocking["module_loading"] == normal["module_loading"] == "LAZY"


def test_no_pass_runs_without_a_device(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from torchsplit.gpucheck import NoUsableDevice

    def no_device() -> list[str]:
        raise NoUsableDevice("no usable CUDA driver (stand-in)", ["CUDA driver: none"])

    fake = tmp_path / "never.py"
    code = main(
        [],
        report=no_device,
        command=lambda p: [sys.executable, str(fake)],
        environ={},
    )
    assert code == 2
    captured = capsys.readouterr()
    assert "gpu-check runs 2 passes" in captured.out
    assert "torchsplit: error: no usable CUDA device: no usable CUDA driver" in captured.err
    assert "pass 1/2" not in captured.out


def test_the_report_shows_the_users_settings_not_torch_cudas() -> None:
    lines = environment_report({"CUDA_MODULE_LOADING": "LAZY"})
    assert "  CUDA_MODULE_LOADING: LAZY" in lines
    unset = environment_report({})
    assert "  CUDA_MODULE_LOADING: (unset: torch_cuda sets EAGER in its process)" in unset


def _gpucheck(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    path = [str(REPO / "tools" / "python")]
    for root in ("core", "third_device/torch_cuda", "third_device/torch_emu"):
        path += [str(REPO / root), str(REPO / "bazel-bin" / root)]
    return subprocess.run(
        [sys.executable, "-m", "torchsplit.gpucheck"],
        env={**env, "PYTHONPATH": os.pathsep.join(path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_on_this_machine_it_says_the_plan_then_exits_2_naming_the_cause() -> None:
    env = {k: v for k, v in os.environ.items() if k != "CUDA_MODULE_LOADING"}
    proc = _gpucheck(env)
    if proc.returncode == 0 or "cuda:0:" in proc.stdout:
        pytest.skip("this machine has a CUDA device")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout.startswith("gpu-check runs 2 passes")
    # The user's setting, although torch_cuda set EAGER in gpucheck's process.
    assert "CUDA_MODULE_LOADING: (unset: torch_cuda sets EAGER in its process)" in proc.stdout
    if cuda_extension_built():
        assert "torchsplit: error: no usable CUDA device: " in proc.stderr
        assert "driver" in proc.stderr
    else:
        assert "torchsplit: error: torch_cuda is not built" in proc.stderr
    assert "Traceback" not in proc.stderr


def _collected(markers: str) -> set[str]:
    pytest_args = ["--collect-only", "-q", "-p", "no:cacheprovider", "-m", markers]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *pytest_args, "tests/conformance", "tests/torch_cuda"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {line for line in proc.stdout.splitlines() if "::" in line}


def _on_cuda(node: str) -> bool:
    """A conformance case parametrised with the cuda backend ("[cuda]", "[cuda-bool]", ...)."""
    return "[" in node and "cuda" in node.rsplit("[", 1)[1].rstrip("]").split("-")


def _marked_asynchronous(nodes: set[str]) -> set[str]:
    """Node ids whose function carries @pytest.mark.asynchronous, read from the sources."""
    marked = set()
    for node in nodes:
        path, name = node.split("::", 1)
        source = (REPO / path).read_text()
        function = name.split("[")[0]
        if f"@pytest.mark.asynchronous\ndef {function}(" in source:
            marked.add(node)
    return marked


@pytest.mark.skipif(not cuda_extension_built(), reason="tests/torch_cuda collects only when built")
def test_the_gpu_selection_includes_the_conformance_suite_on_cuda() -> None:
    normal = _collected(NORMAL)
    blocking = _collected(BLOCKING)
    conformance = {n for n in normal if n.startswith("tests/conformance/") and _on_cuda(n)}
    # Every capability of the suite, on cuda:0, in both passes where it is synchronous.
    assert {Path(n.split("::")[0]).stem for n in conformance} >= {
        "test_ops",
        "test_streams",
        "test_memory",
        "test_copies",
        "test_profiler",
    }
    assert not {n for n in normal if n.startswith("tests/conformance/") and not _on_cuda(n)}
    # The blocking pass is the normal one less exactly the asynchronous tests.
    assert blocking < normal
    assert normal - blocking == _marked_asynchronous(normal)
    assert "tests/torch_cuda/test_gpu_streams.py::test_query_and_synchronize" in normal - blocking
    assert any(n.startswith("tests/torch_cuda/test_gpu_jit.py::") for n in blocking)
