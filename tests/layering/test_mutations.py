"""Every injected layering violation is caught by at least two independent mechanisms, with
the right message (or the case says why only one mechanism can exist); a library left
under bazel-bin by an earlier build is never read.

Slow (one warm Bazel in a temporary copy, several minutes here); `pytest -s` shows the
matrix. `tools/torchsplit audit-mutations --stale` runs the same harness.
"""

from __future__ import annotations

import pytest

from builds import REPO
from torchsplit.audit.mutations import MUTATIONS, render_first_lines, render_matrix, run_all

pytestmark = pytest.mark.bazel


def test_every_violation_is_caught_by_two_mechanisms_and_nothing_stale_is_read() -> None:
    results, stale = run_all(REPO, log=print, stale=True)
    print("\n" + render_matrix(results) + "\n" + render_first_lines(results))
    assert [r.mutation.name for r in results] == [m.name for m in MUTATIONS]
    problems = [p for r in results for p in r.problems]
    assert stale is not None
    assert problems + stale.problems == []
