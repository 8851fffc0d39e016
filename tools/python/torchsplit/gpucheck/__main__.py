"""``python3 -m torchsplit.gpucheck``: the plan, the machine, then every test pass.

Exits 2 (naming the cause) when torch_cuda does not import or no CUDA device
is usable, before any pass runs; otherwise 0 when every pass passed, else 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from torchsplit.errors import TorchsplitError
from torchsplit.gpucheck import NoUsableDevice, device_report, environment_report
from torchsplit.gpucheck.passes import PASSES, Pass, exit_code, pytest_command, run_passes

REPO = Path(__file__).resolve().parents[4]
# The environment as the user set it, taken before the device report imports
# torch_cuda (which sets CUDA_MODULE_LOADING for its own process). The passes
# run with it too.
USER_ENVIRONMENT = dict(os.environ)


def main(
    argv: Sequence[str] | None = None,
    *,
    report: Callable[[], list[str]] = device_report,
    command: Callable[[Pass], list[str]] | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Runs gpu-check; ``report``, ``command`` and ``environ`` are the tests' seams."""
    parser = argparse.ArgumentParser(
        prog="python3 -m torchsplit.gpucheck",
        description="Report the CUDA runtime, driver and devices, then run every GPU test pass.",
    )
    parser.add_argument("--tests", default=str(REPO / "tests"), help="the tests to run (pytest)")
    args = parser.parse_args(argv)
    env = dict(USER_ENVIRONMENT if environ is None else environ)

    print(f"gpu-check runs {len(PASSES)} passes of the GPU tests once a CUDA device is found:")
    for number, p in enumerate(PASSES, 1):
        print(f"  {number}. {p.describe()}: {p.why}")
    for line in environment_report(env):
        print(line)
    try:
        lines = report()
    except NoUsableDevice as error:
        print("\n".join(error.lines), flush=True)
        print(f"torchsplit: error: {error}", file=sys.stderr)
        return 2
    except TorchsplitError as error:
        sys.stdout.flush()
        print(f"torchsplit: error: {error}", file=sys.stderr)
        return 2
    print("\n".join(lines), flush=True)

    def announce(line: str) -> None:
        print(f"gpu-check: {line}", flush=True)

    results = run_passes(
        PASSES, command or pytest_command(sys.executable, args.tests), env, REPO, announce
    )
    for result in results:
        announce(result.describe())
    code = exit_code(results)
    announce("every pass passed" if code == 0 else "a pass failed (see above)")
    return code


if __name__ == "__main__":
    sys.exit(main())
