"""The pipeline policy (tools/layering/pipelines.bzl), with one pipeline per backend."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

from torchsplit.errors import TorchsplitError
from torchsplit.starlark_data import load_globals

DEFAULT_PIPELINES = "tools/layering/pipelines.bzl"
BACKENDS_DIR = "third_device"
PLACEHOLDER = "{backend}"


@dataclass(frozen=True)
class Pipeline:
    name: str
    paths: tuple[str, ...]
    pytest: tuple[str, ...]
    tests: tuple[str, ...]
    backend: bool = False

    def claims(self, path: str) -> str | None:
        """The policy path that puts ``path`` in this pipeline, or None."""
        return next((p for p in self.paths if matches(p, path)), None)


@dataclass
class PipelinePolicy:
    path: str
    pipelines: list[Pipeline]
    everything: list[str]
    shared: list[str]
    graph_pipeline: str | None
    backends: list[str] = field(default_factory=list)

    def by_name(self, name: str) -> Pipeline:
        return next(p for p in self.pipelines if p.name == name)

    def everything_match(self, path: str) -> str | None:
        return next((p for p in self.everything if matches(p, path)), None)

    def shared_match(self, path: str) -> str | None:
        return next((p for p in self.shared if matches(p, path)), None)

    @property
    def all_tests(self) -> list[str]:
        return sorted({t for p in self.pipelines for t in p.tests})


def matches(pattern: str, path: str) -> bool:
    """ "dir/" matches everything below dir; otherwise a whole-path glob ("*" within names)."""
    if pattern.endswith("/"):
        return path.startswith(pattern)
    return fnmatch.fnmatchcase(path, pattern) and path.count("/") == pattern.count("/")


def discover_backends(workspace: Path) -> list[str]:
    """Every directory under third_device/ with a BUILD file is a backend."""
    root = workspace / BACKENDS_DIR
    if not root.is_dir():
        return []
    return sorted(
        d.name
        for d in root.iterdir()
        if d.is_dir() and ((d / "BUILD.bazel").exists() or (d / "BUILD").exists())
    )


def _strings(value: object, what: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TorchsplitError(f"{what} must be a list of strings", where)
    return tuple(value)


def load_pipelines(path: Path, backends: list[str]) -> PipelinePolicy:
    where = str(path)
    raw = load_globals(path, ("PIPELINES", "EVERYTHING", "SHARED", "GRAPH_PIPELINE"))
    entries = raw["PIPELINES"]
    if not isinstance(entries, list):
        raise TorchsplitError("PIPELINES must be a list of dicts", where)
    pipelines: list[Pipeline] = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise TorchsplitError("each PIPELINES entry needs a string 'name'", where)
        name = entry["name"]
        fields = {
            k: _strings(entry.get(k, []), f"{name}.{k}", where)
            for k in ("paths", "pytest", "tests")
        }
        if PLACEHOLDER in name:
            for backend in backends:
                pipelines.append(
                    Pipeline(
                        name.replace(PLACEHOLDER, backend),
                        *(
                            tuple(v.replace(PLACEHOLDER, backend) for v in fields[k])
                            for k in ("paths", "pytest", "tests")
                        ),
                        backend=True,
                    )
                )
        else:
            pipelines.append(Pipeline(name, fields["paths"], fields["pytest"], fields["tests"]))
    names = [p.name for p in pipelines]
    if len(set(names)) != len(names):
        raise TorchsplitError(f"pipeline names repeat: {sorted(names)}", where)
    graph = raw["GRAPH_PIPELINE"]
    if graph is not None and graph not in names:
        raise TorchsplitError(f"GRAPH_PIPELINE {graph!r} is not a pipeline", where)
    return PipelinePolicy(
        where,
        pipelines,
        list(_strings(raw["EVERYTHING"], "EVERYTHING", where)),
        list(_strings(raw["SHARED"], "SHARED", where)),
        graph if isinstance(graph, str) else None,
        backends,
    )
