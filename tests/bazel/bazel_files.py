"""Evaluates WORKSPACE and MODULE.bazel with a real Starlark interpreter and
records what they declare, so tests can compare the two."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import starlark as sl

# Repositories only Bazel 4.2.3's WORKSPACE needs: offline stand-ins for what it
# would download. Under bzlmod the registry provides the real ones.
BAZEL4_STANDINS = {"rules_cc", "rules_java", "remote_coverage_tools"}

# What each WORKSPACE macro creates, as the bzlmod extension tag that creates
# the same repository: macro -> (extension file, extension name, tag, attrs(kwargs)),
# or a list of them for a macro that creates several repositories.
WORKSPACE_MACROS = {
    "local_python_toolchain": (
        "@rules_python//python:extensions.bzl",
        "python",
        "local_toolchain",
        lambda kw: {"name": kw["name"]},
    ),
    "rules_cuda_dependencies": (
        "@rules_cuda//cuda:extensions.bzl",
        "toolchain",
        "local_toolchain",
        lambda kw: {
            "name": "local_cuda",
            "toolkit_visibility": kw.get("toolkit_visibility", ["//visibility:public"]),
            "hermetic_locks": kw.get("hermetic_locks", {}),
        },
    ),
    "cuda_wheels": (
        "@rules_cuda//cuda:extensions.bzl",
        "toolchain",
        "wheels",
        lambda kw: {
            "name": kw.get("name", "cuda_wheels"),
            "wheel_visibility": kw.get("wheel_visibility", ["//visibility:public"]),
            "hermetic_locks": kw.get("hermetic_locks", {}),
        },
    ),
    "rules_hip_dependencies": [
        (
            "@rules_hip//hip:extensions.bzl",
            "toolchain",
            "local_toolchain",
            lambda kw: {
                "name": "local_hip",
                "toolkit_visibility": kw.get("toolkit_visibility", ["//visibility:public"]),
            },
        ),
        (
            "@rules_hip//hip:extensions.bzl",
            "toolchain",
            "hipify_mappings",
            lambda kw: {"name": "hipify_mappings"},
        ),
    ],
    "cpu_blas": (
        "//tools/blas:extensions.bzl",
        "blas",
        "library",
        lambda kw: {
            "name": kw["name"],
            "blas_visibility": kw.get("blas_visibility", ["//visibility:public"]),
            "lock": kw["lock"],
        },
    ),
    "python_configure": (
        "@pybind11_bazel//:extensions.bzl",
        "pybind11",
        "python_headers",
        lambda kw: {"name": kw["name"]},
    ),
    "pybind11_configure": (
        "@pybind11_bazel//:extensions.bzl",
        "pybind11",
        "headers",
        lambda kw: {"name": kw["name"]},
    ),
}


# Packages whose .bzl files WORKSPACE loads for values, not for macros: evaluated for
# real (pure Starlark), e.g. the layering policy's toolkit_visibility(), so the
# lists WORKSPACE passes are the policy's.
EVALUATED_PACKAGES = ("//tools/layering:",)


def _evaluate_bzl(root: Path, label: str) -> sl.FrozenModule:
    """A main-repository .bzl file evaluated, its `:x.bzl` and `//p:x.bzl` loads too."""
    package, _, name = label[2:].partition(":")
    path = root / package / name

    def load(dep: str) -> sl.FrozenModule:
        return _evaluate_bzl(root, f"//{package}{dep}" if dep.startswith(":") else dep)

    module = sl.Module()
    ast = sl.parse(str(path), path.read_text(), sl.Dialect.extended())
    sl.eval(module, ast, sl.Globals.standard(), sl.FileLoader(load))
    return module.freeze()


def _freeze(value: object) -> object:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    return value


@dataclass
class Declared:
    """What a WORKSPACE or MODULE.bazel declares, in comparable form."""

    name: str = ""
    local_repos: dict[str, str] = field(default_factory=dict)  # name -> path
    deps: set[str] = field(default_factory=set)
    # (extension file, extension name, tag, frozen attrs)
    tags: set[tuple[str, str, str, object]] = field(default_factory=set)
    # extension (file, name) -> repositories made visible
    visible_repos: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    toolchains: list[str] = field(default_factory=list)


def _eval(path: Path, text: str, module: sl.Module, loader: sl.FileLoader | None = None) -> None:
    globals_ = sl.Globals.extended_by([sl.LibraryExtension.StructType])
    ast = sl.parse(str(path), text, sl.Dialect.extended())
    sl.eval(module, ast, globals_, loader)


def read_workspace(path: Path) -> Declared:
    out = Declared()
    module = sl.Module()

    def workspace(name: str) -> None:
        out.name = name

    def local_repository(name: str, path: str) -> None:
        out.local_repos[name] = path

    def register_toolchains(*labels: str) -> None:
        out.toolchains.extend(labels)

    module.add_callable("workspace", workspace)
    module.add_callable("local_repository", local_repository)
    module.add_callable("register_toolchains", register_toolchains)

    def macro(symbol: str):
        specs = WORKSPACE_MACROS[symbol]

        def call(**kwargs: object) -> None:
            for ext_file, ext_name, tag, attrs in specs if isinstance(specs, list) else [specs]:
                made = attrs(kwargs)
                out.tags.add((ext_file, ext_name, tag, _freeze(made)))
                out.visible_repos.setdefault((ext_file, ext_name), set()).add(str(made["name"]))

        return call

    def load(label: str) -> sl.FrozenModule:
        if label.startswith(EVALUATED_PACKAGES):
            return _evaluate_bzl(path.parent, label)
        loaded = sl.Module()
        for symbol in WORKSPACE_MACROS:
            loaded.add_callable(symbol, macro(symbol))
        return loaded.freeze()

    _eval(path, path.read_text(), module, sl.FileLoader(load))
    return out


def read_module(path: Path) -> Declared:
    out = Declared()
    text = path.read_text()
    module = sl.Module()
    overrides: dict[str, str] = {}

    def module_(name: str, version: str = "") -> None:
        out.name = name

    def bazel_dep(name: str, version: str = "", **_: object) -> None:
        out.deps.add(name)

    def local_path_override(module_name: str, path: str) -> None:
        overrides[module_name] = path

    def tag(ext_file: str, ext_name: str, tag_name: str, **attrs: object) -> None:
        out.tags.add((ext_file, ext_name, tag_name, _freeze(attrs)))

    def use_repo(ext_file: str, ext_name: str, *repos: str) -> None:
        out.visible_repos.setdefault((ext_file, ext_name), set()).update(repos)

    def register_toolchains(*labels: str) -> None:
        out.toolchains.extend(labels)

    for name, fn in {
        "module": module_,
        "bazel_dep": bazel_dep,
        "local_path_override": local_path_override,
        "_tag": tag,
        "_use_repo": use_repo,
        "register_toolchains": register_toolchains,
    }.items():
        module.add_callable(name, fn)

    # An extension proxy is a struct with one lambda per tag the file calls on it.
    tag_names = sorted(set(re.findall(r"^\s*\w+\.(\w+)\(", text, flags=re.MULTILINE)))
    members = ", ".join(f"{t} = lambda **kw: _tag(bzl, name, {t!r}, **kw)" for t in tag_names)
    prelude = (
        "def use_extension(bzl, name):\n"
        f"    return struct(_bzl = bzl, _name = name, {members})\n"
        "def use_repo(ext, *repos):\n"
        "    _use_repo(ext._bzl, ext._name, *repos)\n"
    )
    # The prelude is prepended: keep MODULE.bazel's line numbers in errors readable.
    _eval(path, prelude + text, module)
    out.local_repos = {name: p for name, p in overrides.items() if name in out.deps}
    return out


def drift(workspace: Declared, module: Declared) -> list[str]:
    """Differences between what WORKSPACE provides and MODULE.bazel declares."""
    problems: list[str] = []
    if workspace.name != module.name:
        problems.append(f"workspace name {workspace.name!r} != module name {module.name!r}")
    in_house = {n: p for n, p in workspace.local_repos.items() if n not in BAZEL4_STANDINS}
    if in_house != module.local_repos:
        problems.append(
            f"local repositories differ: WORKSPACE {sorted(in_house.items())} "
            f"vs MODULE.bazel bazel_dep+local_path_override {sorted(module.local_repos.items())}"
        )
    for missing in sorted(workspace.tags - module.tags, key=str):
        problems.append(f"MODULE.bazel lacks the extension tag {missing}")
    for extra in sorted(module.tags - workspace.tags, key=str):
        problems.append(f"MODULE.bazel has an extension tag WORKSPACE does not provide: {extra}")
    if workspace.visible_repos != module.visible_repos:
        problems.append(
            f"use_repo differs: WORKSPACE makes {workspace.visible_repos}, "
            f"MODULE.bazel imports {module.visible_repos}"
        )
    if workspace.toolchains != module.toolchains:
        problems.append(f"toolchains differ: {workspace.toolchains} vs {module.toolchains}")
    return problems
