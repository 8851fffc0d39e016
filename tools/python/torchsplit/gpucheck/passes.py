"""The test passes of ``tools/dev gpu-check``: every one runs, each is reported.

The GPU tests (``pytest -m gpu``: the conformance suite on cuda:0 and
tests/torch_cuda/test_gpu_*.py) run twice:

1. ``blocking``, with ``CUDA_LAUNCH_BLOCKING=1``: every launch waits for its
   kernel, so a device fault is reported at the kernel that caused it. Tests
   marked ``asynchronous`` (they check that work is still running when the
   host looks) cannot hold there and are deselected.
2. ``normal``: everything, asynchronous behaviour included.

A failing pass does not stop the next one; the check fails when any pass did.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Pass:
    """One pytest run of the GPU tests.

    Args:
      name: how the report names it.
      why: what this pass shows that the others do not.
      markers: pytest's -m expression.
      env: variables set for this pass; None removes a variable the user set.
    """

    name: str
    why: str
    markers: str
    env: Mapping[str, str | None] = field(default_factory=dict)

    def describe(self) -> str:
        settings = " ".join(
            f"{k}={v}" if v is not None else f"{k} unset" for k, v in self.env.items()
        )
        with_env = f" with {settings}" if settings else ""
        return f"{self.name}: pytest -m '{self.markers}'{with_env}"


PASSES = (
    Pass(
        name="blocking",
        why="a device fault is reported at the kernel that caused it",
        markers="gpu and not asynchronous",
        env={"CUDA_LAUNCH_BLOCKING": "1"},
    ),
    Pass(
        name="normal",
        why="the asynchronous behaviour the tests check",
        markers="gpu",
        env={"CUDA_LAUNCH_BLOCKING": None},
    ),
)

# Both passes: no usable device fails the run instead of skipping every test
# (tests/conftest.py).
REQUIRED = {"TORCH_CUDA_REQUIRE_GPU": "1"}


@dataclass(frozen=True)
class PassResult:
    name: str
    returncode: int

    @property
    def passed(self) -> bool:
        # pytest's 5 (nothing collected) is a failure here: the pass checked nothing.
        return self.returncode == 0

    def describe(self) -> str:
        if self.passed:
            return f"{self.name}: passed"
        return f"{self.name}: FAILED (pytest exited {self.returncode})"


def pass_environment(p: Pass, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` (the user's environment) with the pass's own settings applied."""
    env = {**base, **REQUIRED}
    for name, value in p.env.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def pytest_command(python: str, tests: str) -> Callable[[Pass], list[str]]:
    """The argv of pytest over ``tests`` for a pass."""

    def command(p: Pass) -> list[str]:
        return [python, "-m", "pytest", tests, "-m", p.markers, "-ra"]

    return command


def run_passes(
    passes: Sequence[Pass],
    command: Callable[[Pass], list[str]],
    base_env: Mapping[str, str],
    cwd: Path,
    announce: Callable[[str], None],
) -> list[PassResult]:
    """Runs every pass in order, whatever the earlier ones returned."""
    results = []
    for number, p in enumerate(passes, 1):
        announce(f"pass {number}/{len(passes)}: {p.describe()} ({p.why})")
        proc = subprocess.run(command(p), cwd=cwd, env=pass_environment(p, base_env), check=False)
        results.append(PassResult(p.name, proc.returncode))
    return results


def exit_code(results: Sequence[PassResult]) -> int:
    """0 when every pass passed, else 1."""
    return 0 if results and all(r.passed for r in results) else 1
