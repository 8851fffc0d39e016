"""One finding of the audit's file checks (sources, BUILD files, built artifacts)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Finding:
    kind: str  # PYTHON, SOURCE, INCLUDE, BUILD, ARTIFACT
    rule: str  # the policy rule or list it breaks (core-to-backend, REPOSITORIES, CORE_NEEDED...)
    path: str  # workspace-relative file
    line: int  # 0 when the finding is about the whole file (an artifact)
    message: str

    def render(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{self.kind} [{self.rule}] {where}: {self.message}"
