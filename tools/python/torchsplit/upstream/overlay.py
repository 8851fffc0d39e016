"""The Bazel overlay of a restructured real PyTorch tree.

What it adds to (or replaces in) the tree, beside the generic overlay of
``reorg`` (``core/``, ``third_device/<device>/``, the split ``.bzl``):

* the workspace: ``WORKSPACE`` (named ``pytorch``, as upstream's), ``.bazelrc``,
  ``.bazelversion``, ``.bazeliskrc``, ``.bazelignore``, the root ``BUILD.bazel``
  (exports the sources that stay in the root package), ``.gitignore``;
* torchsplit's real rule repositories (``tools/repos/``: the in-house rules_cuda with
  the hermetic toolkits, pybind11_bazel, ...), the toolkit locks (``tools/cuda/``) and
  the layering policy with the project's aspect (``tools/layering/``);
* ``tools/torchsplit/``: the split's ``rules`` for core (``core_rules.bzl``) and the
  Debian / CUDA host repositories (``repositories.bzl``);
* ``c10/**/BUILD.bazel``: upstream's own ``define_targets`` (its ``build.bzl``) with the
  split's core rules, and flags for glog/gflags that stay off;
* ``//third_device/torch_cuda:c10_cuda``: c10/cuda compiled for real, with its tests.

Upstream's Bazel files that target Bazel 6.5 and its downloads stay in the tree; the
packages the split does not build are listed in ``.bazelignore`` with the reason.
"""

from __future__ import annotations

import json
import posixpath
import sys
import textwrap
from importlib import resources
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from torchsplit.errors import TorchsplitError
from torchsplit.reorg.moves import HeaderGroup, Move
from torchsplit.reorg.workspace import local_repositories, render_policy

PROJECT = Path(__file__).resolve().parents[4]
CUDA_PACKAGE = "third_device/torch_cuda"

# Copied from torchsplit as they are: the launchers, the offline rule repositories
# (the real rules_cuda among them) and the toolkit locks.
_COPIED_TREES = (
    "tools/repos/rules_cc",
    "tools/repos/rules_java",
    "tools/repos/rules_python",
    "tools/repos/rules_cuda",
    "tools/repos/pybind11_bazel",
    "tools/repos/remote_coverage_tools",
    "tools/cuda",
)
_COPIED_FILES = ("tools/bazel", ".bazeliskrc", ".bazelversion")
EXECUTABLE = ("tools/bazel",)

# Upstream Bazel packages the split does not build, and why (.bazelignore).
IGNORED = {
    "c10/benchmark": "needs Google Benchmark, which this tree does not provide",
    "tools/autograd": "upstream's code generators, loaded through //:tools/bazel.bzl "
    "(rules_python, pip_deps, rules_cuda)",
    "tools/config": "upstream's --define=cuda switch (needs bazel_skylib's selects); the "
    "split selects CUDA with rules_cuda's flags",
    "tools/setup_helpers": "upstream's code generators (py_binary over pip_deps)",
    "torchgen": "ATen's code generator, loaded through //:tools/bazel.bzl; not wired into "
    "this Bazel build yet (docs/upstream.md: carrying on to ATen)",
}

# c10 packages whose build.bzl defines the core targets (upstream's define_targets).
C10_PACKAGES = ("c10/core", "c10/macros", "c10/mobile", "c10/test", "c10/util")


def _read_project(rel: str) -> str:
    try:
        return (PROJECT / rel).read_text(encoding="utf-8")
    except OSError as exc:
        raise TorchsplitError(
            f"cannot read {rel} of the torchsplit checkout ({exc.strerror})", str(PROJECT / rel)
        ) from exc


def _walk(rel: str) -> list[str]:
    root = PROJECT / rel
    out = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            out.append(path.relative_to(PROJECT).as_posix())
    return out


def project_files(version: str) -> dict[str, str]:
    """torchsplit's files the tree carries: rule repositories, launchers, locks, layering
    (with the policy of this tree, knowing ``version``'s existing couplings)."""
    files = {rel: _read_project(rel) for tree in _COPIED_TREES for rel in _walk(tree)}
    files.update({rel: _read_project(rel) for rel in _COPIED_FILES})
    # The layering aspect and helpers as the project has them (policy.bzl is the tree's own).
    for rel in _walk("tools/layering"):
        if rel.endswith((".bzl", "BUILD.bazel")) and not rel.endswith("/policy.bzl"):
            files[rel] = _read_project(rel)
    files["tools/layering/policy.bzl"] = policy(version)
    return files


def known_couplings(version: str) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(includes, loaders) of ``data/known_couplings.toml`` for ``version``."""
    path = resources.files("torchsplit.upstream").joinpath("data/known_couplings.toml")
    data = tomllib.loads(path.read_text(encoding="utf-8")).get(version, {})
    return list(data.get("include", [])), list(data.get("loader", []))


def policy(version: str) -> str:
    """The tree's layering policy: POLICY plus the couplings judged for ``version``."""
    includes, loaders = known_couplings(version)
    out = [POLICY, "\n# Core files allowed to load code at run time (from torchsplit's\n"]
    out.append(
        "# upstream/data/known_couplings.toml, each with its reason).\nDYNAMIC_LOADERS = [\n"
    )
    out.extend(f"    {json.dumps(e['file'])},  # {e['why']}\n" for e in loaders)
    out.append("]\n\n# Device includes core already has (known_couplings.toml): reported as\n")
    out.append("# known by the audit; any other include of a device header fails it.\n")
    out.append("KNOWN_INCLUDES = [\n")
    for e in includes:
        out.append(
            "    {\n"
            f'        "file": {json.dumps(e["file"])},\n'
            f'        "include": {json.dumps(e["include"])},\n'
            f'        "why": {json.dumps(e["why"])},\n'
            "    },\n"
        )
    out.append("]\n")
    return "".join(out)


# The overlay's BUILD.bazel and WORKSPACE files are stored with this suffix, so that this
# checkout's Bazel does not read them as packages of its own (its workspace filegroups,
# which tests declare as data, then include them).
OVERLAY_SUFFIX = ".overlay"


def data_files() -> dict[str, str]:
    """The files of ``upstream/data/overlay``, relative to the tree's root (less OVERLAY_SUFFIX)."""
    base = resources.files("torchsplit.upstream").joinpath("data/overlay")
    root = Path(str(base))
    return {
        p.relative_to(root).as_posix().removesuffix(OVERLAY_SUFFIX): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


_POLICY_DOC = """The layering policy of the restructured PyTorch tree (written by torchsplit
upstream restructure from torchsplit's own): core is c10's packages and the overlay's //core; the
CUDA backend is //third_device/torch_cuda with the hermetic toolkit. Plain data: the aspect
in check.bzl and `torchsplit audit` read it."""

_CORE_REPOSITORIES = [
    ("bazel_skylib", "bool_flag (c10's glog/gflags switches)"),
    ("bazel_tools", ""),
    ("com_github_gflags_gflags", "off: a stand-in, incompatible if turned on"),
    ("com_github_glog", "off: a stand-in, incompatible if turned on"),
    ("com_google_googletest", "Debian's googletest, for c10's own tests"),
    ("cpuinfo", "Debian's libcpuinfo-dev"),
    ("fmt", "Debian's libfmt-dev"),
    ("local_config_cc", ""),
    ("local_config_python", ""),
    ("local_python", ""),
    ("platforms", ""),
    ("pybind11", ""),
    ("pybind11_bazel", ""),
    ("remote_coverage_tools", ""),
    ("rules_cc", ""),
    ("rules_python", ""),
]
_CUDA_TOOLKIT = [
    ("cuda_host_12_6", "NVIDIA's 12.6 wheels for host code (:c10_cuda_12_6)"),
    ("cuda_host_13_0", "nvml.h for the 13.0 toolkit"),
    ("local_cuda", "the hermetic CUDA toolkit"),
    ("rules_cuda", ""),
]

# The shared libraries core's built artifacts may name in DT_NEEDED, and its link flags
# with -l (prefixes): the C/C++ runtime and Debian's fmt and cpuinfo.
_CORE_NEEDED = [
    "ld-linux",
    "libc.so",
    "libcpuinfo.so",
    "libdl.so",
    "libfmt.so",
    "libgcc_s.so",
    "libm.so",
    "libpthread.so",
    "librt.so",
    "libstdc++.so",
]

POLICY = render_policy(
    _POLICY_DOC,
    core=["//c10/...", "//core/..."],
    core_repositories=_CORE_REPOSITORIES,
    # torch_cuda names both vendors: PyTorch's c10/cuda spells HIP/ROCm headers and macros
    # (hipified builds share its sources), so ROCm is part of its toolkit here.
    toolkits={"torch_cuda": (_CUDA_TOOLKIT, ["cuda", "rocm"])},
    toolkit_rules=True,
    # c10/test is PyTorch's tests of c10, not core: they name devices ("cuda" strings,
    # kCUDA cases) as test data, and nothing in core depends on them.
    exempt=["//c10/test/...", "//third_party/...", "//tools/..."],
    core_needed=_CORE_NEEDED,
)


def _debian_shared_library(name: str, hdrs: str, headers: str, lib: str, package: str) -> str:
    """A debian_library stanza for a library Debian ships as headers plus one .so."""
    return f'''debian_library(
    name = "{name}",
    build_file_content = """
cc_import(
    name = "lib{name}",
    shared_library = "lib/{lib}",
)

cc_library(
    name = "{name}",
    hdrs = {hdrs},
    includes = ["include"],
    visibility = ["//visibility:public"],
    deps = [":lib{name}"],
)
""",
    files = {{
        "{headers}": "{headers}",
        "{lib}": "lib/{lib}",
    }},
    packages = ["{package}"],
)

'''


WORKSPACE = (
    """# Written by `torchsplit upstream restructure`: the split's workspace for the real
# PyTorch tree. Upstream's (Bazel 6.5, http_archive downloads) is replaced: every
# repository here is local, so the build downloads nothing.
workspace(name = "pytorch")
"""
    + local_repositories(
        [
            "rules_cc",
            "rules_java",
            "remote_coverage_tools",
            "rules_python",
            "rules_cuda",
            "pybind11_bazel",
            "bazel_skylib",
        ]
    )
    + """
load("@rules_python//python:repositories.bzl", "local_python_toolchain")

local_python_toolchain(name = "local_python")

register_toolchains("@local_python//:toolchain")

load("@rules_cuda//cuda:repositories.bzl", "rules_cuda_dependencies")

# torchsplit's hermetic CUDA toolkits (NVIDIA's wheels, hash-pinned, installed by
# tools/dev bootstrap); only the device backends may see them.
rules_cuda_dependencies(
    hermetic_locks = {
        "13.0.88": "@//tools/cuda:requirements_lock.txt",
        "13.5.37": "@//tools/cuda:requirements_lock_13_5.txt",
    },
    toolkit_visibility = ["@//third_device/torch_cuda:__subpackages__"],
)

load(
    "//tools/torchsplit:repositories.bzl",
    "cuda_host_libraries",
    "debian_library",
    "unavailable_library",
)

# Host-side CUDA libraries c10/cuda needs beyond the toolkit (nvml.h), and CUDA 12.6
# for host code (:c10_cuda_12_6); installed by tools/dev upstream.
cuda_host_libraries(
    name = "cuda_host_13_0",
    lock = "//tools/cuda:host_lock_13_0.txt",
    visibility_to = ["@//third_device/torch_cuda:__subpackages__"],
)

cuda_host_libraries(
    name = "cuda_host_12_6",
    lock = "//tools/cuda:host_lock_12_6.txt",
    visibility_to = ["@//third_device/torch_cuda:__subpackages__"],
)

# What dfsg removed from third_party/, from Debian's packages (as Debian builds PyTorch).
"""
    + "".join(
        _debian_shared_library(*spec)
        for spec in (
            ("fmt", 'glob(["include/fmt/*.h"])', "include/fmt", "libfmt.so", "libfmt-dev"),
            (
                "cpuinfo",
                '["include/cpuinfo.h"]',
                "include/cpuinfo.h",
                "libcpuinfo.so",
                "libcpuinfo-dev",
            ),
        )
    )
    + """debian_library(
    name = "com_google_googletest",
    build_file_content = \"\"\"
cc_library(
    name = "gtest",
    srcs = ["lib/libgmock.a", "lib/libgtest.a"],
    hdrs = glob(["include/gtest/**/*.h", "include/gmock/**/*.h"]),
    includes = ["include"],
    linkopts = ["-pthread"],
    visibility = ["//visibility:public"],
)

cc_library(
    name = "gtest_main",
    srcs = ["lib/libgtest_main.a"],
    visibility = ["//visibility:public"],
    deps = [":gtest"],
)
\"\"\",
    files = {
        "include/gmock": "include/gmock",
        "include/gtest": "include/gtest",
        "libgmock.a": "lib/libgmock.a",
        "libgtest.a": "lib/libgtest.a",
        "libgtest_main.a": "lib/libgtest_main.a",
    },
    packages = ["libgtest-dev", "libgmock-dev"],
)

# glog and gflags, which c10 can use, stay off (//c10:use_glog, //c10:use_gflags): named
# so that queries over every select() branch resolve, incompatible if turned on.
unavailable_library(
    name = "com_github_glog",
    target = "glog",
    why = "glog is off in this tree; a debian_library over libgoogle-glog-dev would provide it",
)

unavailable_library(
    name = "com_github_gflags_gflags",
    target = "gflags",
    why = "gflags is off in this tree; a debian_library over libgflags-dev would provide it",
)

load("@pybind11_bazel//:python_configure.bzl", "pybind11_configure", "python_configure")

python_configure(name = "local_config_python")

pybind11_configure(name = "pybind11")
"""
)

BAZELRC = """# Written by `torchsplit upstream restructure` (upstream's targets Bazel 6.5).
build --incompatible_strict_action_env
build --nosandbox_debug
build --cxxopt=-std=c++17 --host_cxxopt=-std=c++17
test --test_output=errors

# Upstream includes headers by their path from the root (<c10/util/Half.h>), and
# generated ones (<c10/macros/cmake_macros.h>) by their path from the output root:
# its .bazelrc puts both on every C++ compile's include path, as here. The sandbox
# still shows a compile only the headers its target declares. nvcc compiles
# (cuda_library) get the same through their copts.
build --copt=-I.
build --copt=-isystem --copt=bazel-out/k8-fastbuild/bin
build --copt=-isystem --copt=bazel-out/k8-opt/bin

# The layering check runs on every build, as in torchsplit itself.
build --aspects=//tools/layering:check.bzl%layering_check

# GPU architectures: Hopper only, to keep a 2-core CI's nvcc time down (rules_cuda's
# default is sm_80;sm_90;sm_100;sm_120;compute_120).
build --@rules_cuda//cuda:archs=sm_90

# CUDA toolkits: the hermetic 13.0.88 by default; cuda13_5 the other pinned one.
build:cuda13_5 --repo_env=HERMETIC_CUDA_VERSION=13.5.37
build:cpu-only --@rules_cuda//cuda:enable=false

# torchsplit's remote cache on loopback (its docs/remote-cache.md).
build:remote-cache --remote_cache=http://127.0.0.1:8980
build:remote-cache --remote_timeout=30

build:ci --curses=no
build:ci --color=no
build:ci --show_progress_rate_limit=30
"""


def bazelignore(upstream: str = "") -> str:
    """Upstream's .bazelignore, then the upstream packages the split does not build, each
    with its reason (comment lines: Bazel 4.2.3 reads one as a path that does not exist)."""
    out = [upstream.rstrip("\n") + "\n\n"] if upstream.strip() else []
    out.append("# Added by `torchsplit upstream restructure`: upstream packages the split\n")
    out.append("# does not build (they load //:tools/bazel.bzl or downloads it does not have).\n")
    for path, why in sorted(IGNORED.items()):
        out.append(f"# {path}: {why}\n{path}\n")
    return "".join(out)


GITIGNORE = "/bazel-*\n/user.bazelrc\n"


def root_build(tops: list[str]) -> str:
    return (
        "# Written by `torchsplit upstream restructure`: upstream keeps its sources in the\n"
        "# root package; the overlay's targets name them as //:path.\n"
        'package(default_visibility = ["//visibility:public"])\n\n'
        "exports_files(glob([\n" + "".join(f'    "{top}/**",\n' for top in tops) + "]))\n"
    )


def c10_build(package: str) -> str:
    """A c10 package's BUILD file: upstream's build.bzl with the split's core rules."""
    head = (
        "# Written by `torchsplit upstream restructure`: upstream's own targets (build.bzl)\n"
        "# with the split's core rules (tools/torchsplit/core_rules.bzl: no CUDA rules).\n"
    )
    if package == "c10":
        return (
            head
            + 'load("@bazel_skylib//rules:common_settings.bzl", "bool_flag")\n'
            + 'load("//tools/torchsplit:core_rules.bzl", "rules")\n'
            + 'load(":build.bzl", "define_targets")\n\n'
            + "define_targets(rules = rules)\n\n"
            + "# glog and gflags stay off (upstream's default is on): --//c10:use_glog turns\n"
            + "# one on, given a repository for it.\n"
            + "".join(
                f'bool_flag(\n    name = "use_{x}",\n    build_setting_default = False,\n)\n\n'
                f'config_setting(\n    name = "using_{x}",\n'
                f'    flag_values = {{":use_{x}": "true"}},\n)\n\n'
                for x in ("gflags", "glog")
            ).rstrip("\n")
            + "\n"
        )
    return (
        head
        + 'load("//tools/torchsplit:core_rules.bzl", "rules")\n'
        + 'load(":build.bzl", "define_targets")\n\n'
        + "define_targets(rules = rules)\n"
    )


def c10_cuda_target(group: HeaderGroup, moves: list[Move], variable: str) -> str:
    """``//third_device/torch_cuda:c10_cuda``, compiled: upstream's c10/cuda library (host
    C++ against the toolkit's headers, as upstream builds it), its generated macros
    header, the host runtime it links (a flag picks the CUDA line), and its tests."""
    base = "csrc/framework/cuda"
    macros = f"{base}/impl/cuda_cmake_macros.h"
    tests = sorted(
        m.destination[len(CUDA_PACKAGE) + 1 :]
        for m in moves
        if m.destination.startswith(f"{CUDA_PACKAGE}/{base}/test/")
        and m.destination.endswith((".cpp", ".cu"))
    )
    lines = [
        "\n# c10/cuda, compiled: upstream's c10/cuda/build.bzl target, moved. Host C++ only\n",
        "# (c10/cuda has no .cu): the host compiler against the toolkit's headers, as\n",
        "# upstream builds it. Its headers keep their <c10/cuda/...> spelling.\n",
        "cmake_configure_file(\n",
        '    name = "c10_cuda_cmake_macros",\n',
        f'    src = "{macros}.in",\n',
        f'    out = "{macros}",\n',
        "    definitions = [],\n",
        ")\n\n",
        "cc_library(\n",
        f'    name = "{group.name}",\n',
        "    hdrs = [\n",
        *(f'        "{h}",\n' for h in group.headers),
        f'        ":{macros}",\n',
        "    ],\n",
        f'    include_prefix = "{group.prefix}",\n',
        f'    strip_include_prefix = "{group.strip}",\n',
        ")\n\n",
        *_c10_cuda_library(
            "c10_cuda",
            group.name,
            variable,
            ["@cuda_host_13_0//:headers", "@local_cuda//:cuda_runtime"],
            "the hermetic CUDA 13.0 toolkit, plus nvml.h (@cuda_host_13_0); what :framework uses",
        ),
        *_c10_cuda_library(
            "c10_cuda_12_6",
            group.name,
            variable,
            ["@cuda_host_12_6//:cuda_runtime"],
            "the same sources against CUDA 12.6 (NVIDIA's cu12 wheels, @cuda_host_12_6): "
            "PyTorch 2.6's CUDA line. A target of its own, so both build in one output "
            "directory, sharing core's objects",
        ),
    ]
    lines.append(
        "\n# c10/cuda's own tests (upstream's c10/cuda/test/build.bzl), built everywhere CUDA\n"
        "# is, run only on a GPU: tagged gpu (tools/dev upstream filters them out without one).\n"
    )
    for test in tests:
        stem = posixpath.splitext(posixpath.basename(test))[0]
        name = "c10_cuda_test_" + stem.replace("CUDAAssertionsTest_", "dsa_")
        if test.endswith(".cu"):
            lines += [
                "\ncuda_library(\n",
                f'    name = "{name}_lib",\n',
                f'    srcs = ["{test}"],\n',
                '    copts = ["-I.", "-isystem", "bazel-out/k8-fastbuild/bin"],\n',
                "    testonly = True,\n",
                "    deps = [\n",
                '        ":c10_cuda",\n',
                '        "@com_google_googletest//:gtest_main",\n',
                "    ],\n",
                ")\n",
                "\ncc_test(\n",
                f'    name = "{name}",\n',
                '    tags = ["gpu"],\n',
                "    target_compatible_with = requires_cuda(),\n",
                f'    deps = [":{name}_lib"],\n',
                ")\n",
            ]
        else:
            lines += [
                "\ncc_test(\n",
                f'    name = "{name}",\n',
                f'    srcs = ["{test}"],\n',
                '    tags = ["gpu"],\n',
                "    target_compatible_with = requires_cuda(),\n",
                "    deps = [\n",
                '        ":c10_cuda",\n',
                '        "@com_google_googletest//:gtest_main",\n',
                "    ],\n",
                ")\n",
            ]
    return "".join(lines)


def _c10_cuda_library(
    name: str, headers: str, variable: str, toolkit: list[str], why: str
) -> list[str]:
    return [
        "".join(f"# {line}\n" for line in _wrap(f"c10/cuda against {why}.")),
        "cc_library(\n",
        f'    name = "{name}",\n',
        f'    srcs = torchsplit_srcs({variable}, "{CUDA_PACKAGE}"),\n',
        '    defines = ["USE_CUDA"],\n',
        '    local_defines = ["C10_BUILD_MAIN_LIB"],\n',
        "    target_compatible_with = requires_cuda(),\n",
        "    deps = [\n",
        f'        ":{headers}",\n',
        '        "//c10/core:base",\n',
        '        "//c10/macros",\n',
        '        "//c10/util:base",\n',
        *(f'        "{t}",\n' for t in toolkit),
        "    ],\n",
        "    alwayslink = True,\n",
        ")\n\n",
    ]


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, 84)


def torch_cuda_loads() -> str:
    """The loads the compiled c10_cuda section needs, added to torch_cuda's BUILD file."""
    return (
        'load("@rules_cuda//cuda:defs.bzl", "requires_cuda")\n'
        'load("//c10/macros:cmake_configure_file.bzl", "cmake_configure_file")\n'
    )
