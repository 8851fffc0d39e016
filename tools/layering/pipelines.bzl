"""CI pipelines: which tests run when which part of the tree changes.

Plain data only (no load, no function), read by `torchsplit affected` with
starlark-pyo3, like policy.bzl beside it. See docs/affected.md.

A pipeline owns Bazel test targets and pytest paths. `torchsplit affected`
selects a pipeline when a changed file reaches one of its test targets in the
build graph (reverse dependencies over every select() branch), or when the file
lies under one of its `paths`. "{backend}" is a placeholder: the entry is
stamped out once per directory under third_device/, so a new vendor gets its
own pipeline with no edit here. A test entry ending in "*" stands for every
test target whose label starts with the rest (tests/suites.bzl makes one target
per test file: "//tests:tools/*").
"""

PIPELINES = [
    {
        "name": "core",
        "paths": ["core/", "tests/core/", "tests/jit/", "tests/distributed/", "tests/backends/"],
        "pytest": ["tests/core", "tests/jit", "tests/distributed"],
        "tests": [
            "//tests:conformance_test",
            "//tests:core/*",
            "//tests:core_test",
            "//tests:distributed/*",
            "//tests:jit_test",
        ],
    },
    {
        "name": "{backend}",
        "paths": ["third_device/{backend}/", "tests/{backend}/"],
        "pytest": ["tests/{backend}"],
        "tests": ["//tests:{backend}_*", "//third_device/{backend}:*"],
    },
    {
        # The CLI, the audit and the checks that drive Bazel itself.
        "name": "tools",
        "paths": ["tools/", "tests/tools/", "tests/layering/", "tests/bazel/", "bench/", ".ci/"],
        "pytest": ["tests/tools", "tests/layering", "tests/bazel", "tests/install"],
        "tests": [
            "//tests:bazel/*",
            "//tests:install/*",
            "//tests:layering/*",
            "//tests:tools/*",
        ],
    },
    {
        "name": "docs-only",
        "paths": ["docs/", "README.md"],
        "pytest": ["tests/docs"],
        "tests": ["//tests:docs/*"],
    },
]

# A change to one of these selects every pipeline: what they define reaches
# every action (flags, toolchains, pinned dependencies) or decides the
# selection itself. A trailing "/" names a directory, "*" matches within a name.
EVERYTHING = [
    ".bazelrc",
    ".bazelversion",
    ".bazeliskrc",
    ".bazelignore",
    "WORKSPACE",
    "MODULE.bazel",
    "BUILD.bazel",
    "requirements.txt",
    "package.json",
    "package-lock.json",
    "pyproject.toml",
    "tools/cuda/requirements_lock*.txt",
    "tools/bazel",
    "tools/repos/",
    "tools/dev",
    "tools/layering/policy.bzl",
    "tools/layering/pipelines.bzl",
    "tests/conftest.py",
]

# Changes under these packages also select every backend pipeline: backends
# build on core, so their tests re-test it.
SHARED = ["core/"]

# BUILD and .bzl changes feed the layering audit: they also select this one.
GRAPH_PIPELINE = "tools"
