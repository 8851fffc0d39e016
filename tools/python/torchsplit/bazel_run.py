"""Running Bazel from the tools: argument lists only, failures as TorchsplitError."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from torchsplit.errors import TorchsplitError


class BazelFailed(TorchsplitError):
    """Bazel itself failed (bad query, broken BUILD file...): the audit cannot conclude."""


def default_bazel(workspace: Path) -> str:
    launcher = workspace / "tools" / "bazel"
    return str(launcher) if launcher.exists() else "bazel"


@dataclass
class Bazel:
    """One workspace, one Bazel command line prefix; counts calls and time spent."""

    workspace: Path
    command: list[str]
    startup: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    timeout: float = 1800
    calls: int = 0
    seconds: float = 0.0

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [*self.command, *self.startup, *args]
        start = time.monotonic()
        try:
            proc = subprocess.run(
                cmd,
                cwd=self.workspace,
                env={**os.environ, **self.env},
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except FileNotFoundError as exc:
            raise BazelFailed(f"cannot run Bazel: {cmd[0]} not found") from exc
        except subprocess.TimeoutExpired as exc:
            raise BazelFailed(f"`{' '.join(cmd)}` timed out after {self.timeout:.0f}s") from exc
        finally:
            self.calls += 1
            self.seconds += time.monotonic() - start
        if check and proc.returncode != 0:
            raise BazelFailed(
                f"`{' '.join(cmd)}` exited {proc.returncode}:\n{error_lines(proc.stderr)}"
            )
        return proc

    def lines(self, *args: str) -> list[str]:
        """stdout lines of a query. An empty result exits 0 with "INFO: Empty results"
        on stderr, so only stdout says what was found."""
        return [line for line in self.run(*args).stdout.splitlines() if line.strip()]


def error_lines(stderr: str, keep: int = 15) -> str:
    """Bazel's own error lines (or the tail of stderr when it printed none)."""
    lines = stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith(("ERROR", "FATAL"))]
    return "\n".join((errors or lines)[-keep:])
