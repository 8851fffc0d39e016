"""One finding of the audit's file checks (sources, BUILD files, flags, built artifacts)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Finding:
    # GRAPH (a query over the build graph), PYTHON, SOURCE, INCLUDE, BUILD, FLAGS, ARTIFACT
    kind: str
    rule: str  # the policy rule or list it breaks (core-to-backend, REPOSITORIES, CORE_NEEDED...)
    path: str  # workspace-relative file (or a label, for GRAPH and FLAGS)
    line: int  # 0 when the finding is about the whole file (an artifact)
    message: str
    pair: str = ""  # the layers it couples: "core -> torch_cuda", "torch_emu -> cuda toolkit"

    def render(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        pair = f"{self.pair}: " if self.pair else ""
        return f"{self.kind} [{self.rule}] {where}: {pair}{self.message}"
