"""Every injected layering violation is caught by at least two independent mechanisms, with
the right message (or the case says why only one mechanism can exist); a library left
under bazel-bin by an earlier build is never read.

Slow (one warm Bazel in a temporary copy, several minutes here); `pytest -s` shows the
matrix. `tools/torchsplit audit-mutations --stale` runs the same harness.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from builds import REPO
from torchsplit.audit.mutations import MUTATIONS, render_first_lines, render_matrix, run_all

pytestmark = pytest.mark.bazel


def shard(environ: dict[str, str]) -> tuple[int, int]:
    """(index, count) of this run under Bazel's test sharding; (0, 1) otherwise."""
    count = int(environ.get("TEST_TOTAL_SHARDS", "1"))
    index = int(environ.get("TEST_SHARD_INDEX", "0"))
    status = environ.get("TEST_SHARD_STATUS_FILE")
    if status:
        Path(status).touch()  # tells Bazel this test knows how to shard
    return index, count


def test_every_violation_is_caught_by_two_mechanisms_and_nothing_stale_is_read() -> None:
    index, count = shard(dict(os.environ))
    # Every count-th mutation from index (`bazel test` runs the shards in parallel, each
    # with its own warm Bazel); the stale-artifact case on the first shard.
    mine = MUTATIONS[index::count]
    results, stale = run_all(REPO, mine, log=print, stale=index == 0)
    print("\n" + render_matrix(results) + "\n" + render_first_lines(results))
    assert [r.mutation.name for r in results] == [m.name for m in mine]
    problems = [p for r in results for p in r.problems]
    assert problems + (stale.problems if stale else []) == []
    assert (stale is not None) == (index == 0)
