"""The layering policy of torchsplit: the one file every enforcement layer reads.

Plain data only (no load, no function), so that Starlark (visibility in
tools/build_defs/backend.bzl, the aspect in tools/layering/check.bzl) and
Python (`torchsplit audit`, which evaluates this file with starlark-pyo3) read
the same values. See docs/layering.md.

Patterns name packages: "//core/..." is the package core and everything below
it, "@local_cuda//..." every package of that repository. A placeholder such as
"{backend}" stands for one directory name; within one rule, the same
placeholder binds the same name on both sides and different placeholders bind
different names. So "//third_device/{backend}/..." -> "//third_device/{other}/..."
forbids every backend from depending on every other one, and a new backend
needs no edit here.
"""

# The layers, for reports: name -> package pattern (first match wins).
LAYERS = [
    ["core", "//core/..."],
    ["backend", "//third_device/{backend}/..."],
    ["toolkit", "@local_cuda//..."],
    ["tests", "//tests/..."],
    ["tools", "//tools/..."],
]

# Forbidden dependency edges, direct or transitive (through deps, data, srcs and
# the like, in any select() branch). "from" may not reach "to".
FORBIDDEN = [
    {
        "from": "//core/...",
        "name": "core-to-backend",
        "to": "//third_device/...",
        "why": "core knows no device but the CPU; backends register their devices at run time",
    },
    {
        "from": "//core/...",
        "name": "core-to-toolkit",
        "to": "@local_cuda//...",
        "why": "core builds with no CUDA toolkit present; only backends may use the toolkit",
    },
    {
        "from": "//third_device/{backend}/...",
        "name": "backend-to-backend",
        "to": "//third_device/{other}/...",
        "why": "device backends never depend on each other; share code through core",
    },
]

# Packages no rule applies to as a source: they may depend on anything.
EXEMPT = [
    "//tests/...",
    "//tools/...",
]

# Visibility of the guarded layers (layer 1). A backend's targets are visible to
# the backend itself and to the tests. A toolkit repository is visible to the
# backends whose TOOLKITS entry names it (WORKSPACE passes
# toolkit_visibility(repository) from rules.bzl).
BACKEND_VISIBILITY = [
    "//third_device/{backend}/...",
    "//tests/...",
]

# The positive policy: the external repositories each layer may reach (its
# build graph, its select() keys and the files its BUILD files load). Anything
# else -- the CUDA toolkit, the NVIDIA wheels, rules_cuda, any repository added
# later -- is a violation for that layer: the aspect (check.bzl), the graph
# tests (graph.bzl) and the audit all read these lists. "" is the main
# repository, governed by FORBIDDEN above.
CORE_REPOSITORIES = [
    "bazel_tools",  # Bazel's own tools and toolchain glue
    "cpu_blas",  # the CPU BLAS core's matmul calls (tools/blas)
    "local_config_cc",  # the C++ toolchain
    "local_config_python",  # the Python headers (pybind11's python_configure)
    "local_python",  # the Python toolchain
    "platforms",  # constraint values (implicit in test rules)
    "pybind11",  # pybind11's headers
    "pybind11_bazel",  # pybind_extension (loaded by BUILD files)
    "remote_coverage_tools",  # implicit in every test rule (coverage)
    "rules_cc",  # cc_* rules (loaded by BUILD files)
    "rules_python",  # py_* rules (loaded by BUILD files)
]

# layer (LAYERS name) -> the external repositories every package of it may
# reach. A backend may also reach its own toolkit (TOOLKITS below), and no
# other backend's.
REPOSITORIES = {
    "backend": CORE_REPOSITORIES,
    "core": CORE_REPOSITORIES,
}

# Each backend's own toolkit, keyed by its directory under third_device/:
#   repositories  the external repositories it may reach beyond REPOSITORIES
#                 (and the only backends that may see them: toolkit_visibility)
#   vendors       the vendor families of tools/python/torchsplit/vendors.py
#                 whose libraries, symbols, command-line tools, environment
#                 variables and Python modules its code and artifacts may name
# A backend with no entry (torch_emu, a new vendor's copy of it) has no
# toolkit: it reaches core and nothing else. Granting a toolkit is a policy
# edit, reviewed like one.
TOOLKITS = {
    "torch_cuda": {
        "repositories": [
            "cuda_wheels",  # NVIDIA's runtime wheels (NVRTC, NCCL)
            "local_cuda",  # the CUDA toolkit
            "rules_cuda",  # cuda_library, the CUDA toolchain and its config settings
        ],
        "vendors": ["cuda"],
    },
    "torch_hip": {
        "repositories": [
            "hipify_mappings",  # torch.utils.hipify's CUDA -> HIP table, from the torch wheel
            "local_hip",  # the HIP toolkit (hipcc, libamdhip64)
            "rules_hip",  # hip_library, hipify_sources and their config settings
        ],
        "vendors": ["rocm"],
    },
}

# Derived backends: a backend whose device sources are produced at build time
# by translating another backend's (e.g. HIP sources hipified from
# torch_cuda's). Keyed by the derived backend's directory:
#   from  the parent backend's directory
#   via   the rule kinds (as `bazel query --output=label_kind` prints them)
#         of the translation rules
# A rule of a "via" kind in the derived backend may read the parent's *source
# files*; nothing else of the derived backend may reach the parent: not its
# targets, libraries, generated files or headers, not its Python package, not
# its extension. Every mechanism reads this dict (docs/layering.md).
DERIVED_BACKENDS = {
    "torch_hip": {
        "from": "torch_cuda",
        "via": ["hipify_sources"],
    },
}

# Files only a device compiler builds (CUDA and HIP sources and headers,
# device code objects): refused in the srcs/hdrs of every core target by the
# aspect, the audit's graph query, its BUILD and source checks. Must cover
# torchsplit.vendors' device suffixes (tests/layering/test_policy.py).
DEVICE_SOURCE_SUFFIXES = [
    ".cu",
    ".cuh",
    ".hip",
    ".ptx",
    ".cubin",
    ".fatbin",
    ".hsaco",
]

# The shared libraries core's built artifacts (libtorch_core.so, _C.so) may
# name in DT_NEEDED: the C/C++ runtime, one another and the CPU BLAS
# (@cpu_blas, bundled in torch_core's wheel). Matched by prefix. The same list
# bounds the -l flags core's targets link with, whoever computed them (the
# aspect reads the effective link flags; the audit reads aquery's).
CORE_NEEDED = [
    "ld-linux",
    "libc.so",
    "libdl.so",
    "libgcc_s.so",
    "libm.so",
    "libpthread.so",
    "librt.so",
    "libscipy_openblas.so",
    "libstdc++.so",
    "libtorch_core.so",
]

# Core's files allowed to load code at run time (dlopen/dlsym in C/C++,
# importlib/__import__/ctypes in Python); even there a vendor name is a violation.
DYNAMIC_LOADERS = [
    "core/csrc/jit/KernelLibraries.cpp",
    "core/torch_core/_backends.py",
    "core/torch_core/testing.py",  # the conformance suite's per-backend test adapters
]
