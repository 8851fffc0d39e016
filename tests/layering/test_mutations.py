"""Every injected layering violation is caught by at least two layers, with the right message.

Slow (one warm Bazel in a temporary copy, about 2 minutes here); `pytest -s` shows
the matrix. `tools/torchsplit audit-mutations` runs the same harness.
"""

from __future__ import annotations

import pytest

from builds import REPO
from torchsplit.audit.mutations import MUTATIONS, render_matrix, run_all

pytestmark = pytest.mark.bazel


def test_every_violation_is_caught_by_two_layers() -> None:
    results = run_all(REPO, log=print)
    print("\n" + render_matrix(results))
    assert [r.mutation.name for r in results] == [m.name for m in MUTATIONS]
    problems = [p for r in results for p in r.problems]
    assert problems == []
