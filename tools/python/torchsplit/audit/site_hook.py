"""Start-up hook of the run-time layering guard, installed into the virtualenv's
site-packages as ``torchsplit_layering.py`` by ``tools/dev bootstrap``, with the
``torchsplit-layering.pth`` line that imports it only when

* TORCHSPLIT_LAYERING_GUARD names a checkout (tests/conftest.py sets it, so every Python
  process a test starts is guarded too), or
* Python runs in development mode (``python -X dev``, PYTHONDEVMODE=1) inside a
  checkout (found from the working directory, then the script's).

Any other start costs one attribute lookup. It must import nothing of torchsplit before
it has put the checkout's tools/python on sys.path (appended: the program's own paths
keep precedence). A failure is printed, never raised: start-up must not break.
"""

from __future__ import annotations

import os
import sys

POLICY = os.path.join("tools", "layering", "policy.bzl")


def _checkout() -> str | None:
    named = os.environ.get("TORCHSPLIT_LAYERING_GUARD")
    if named:
        return named
    if not sys.flags.dev_mode:
        return None
    starts = [os.getcwd()]
    if sys.argv and sys.argv[0] and os.path.exists(sys.argv[0]):
        starts.append(os.path.dirname(os.path.abspath(sys.argv[0])))
    for start in starts:
        here = start
        while True:
            if os.path.isfile(os.path.join(here, POLICY)):
                return here
            parent = os.path.dirname(here)
            if parent == here:
                break
            here = parent
    return None


def main() -> None:
    repo = _checkout()
    if repo is None:
        return
    tools = os.path.join(repo, "tools", "python")
    if tools not in sys.path:
        sys.path.append(tools)
    from pathlib import Path

    from torchsplit.audit.runtime import install_for_checkout

    install_for_checkout(Path(repo))


try:
    main()
except Exception as exc:
    print(f"torchsplit: the run-time layering guard is not installed: {exc}", file=sys.stderr)
