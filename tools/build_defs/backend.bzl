"""device_backend: the standard shape of a device backend under third_device/.

Every backend (torch_cuda, torch_emu, a vendor's) declares, in its own package:

  :headers      the backend's headers, as "<backend>/csrc/..."
  :framework    device runtime: hooks, allocator, streams/events, guard
  :aten         kernels for core's ops, launched on the current stream
  :jit          the backend's fuser for core's fusion IR
  :distributed  process-group backend for its tensors
  :profiler     device-side timing for core's profiler
  :pybinding    the Python extension <package>/<extension>.so linking the rest
  :<extension>  alias of :pybinding (e.g. :_CUDAC)
  :<backend>    py_library of the Python package, with the extension as data
  :dev_dist_info  the development build's entry point (autoload without a wheel)

  :conformance_test  tests/conformance/ run on this backend's device type

Sources come from the backend's own build_variables.bzl (its
backend_sources()); C++ lives under csrc/<module>/ and is included as
"<backend>/csrc/<module>/X.h". Nothing outside third_device/<backend>/ names
a backend: adding one edits no shared file.
"""

load("@pybind11_bazel//:build_defs.bzl", "pybind_extension")
load("@rules_cc//cc:defs.bzl", "cc_library")
load("@rules_python//python:defs.bzl", "py_library")
load("//tests:conformance.bzl", "conformance_labels")
load("//tools/build_defs:pytest.bzl", "pytest_test")
load("//tools/build_defs:sources.bzl", "package_sources")
load("//tools/build_defs:wheel.bzl", "backend_dev_dist_info")
load("//tools/layering:graph.bzl", "layer_graph_test")
load("//tools/layering:rules.bzl", "backend_visibility", "derived_readers")

# The standard modules of a device backend, in dependency order. Each backend
# package declares one target per module, from its build_variables.bzl.
BACKEND_MODULES = ["framework", "aten", "jit", "distributed", "profiler", "pybinding"]

# Which standard modules each module builds on (framework is the base).
_MODULE_DEPS = {
    "aten": ["framework"],
    "distributed": ["framework", "aten"],
    "framework": [],
    "jit": ["framework", "aten"],
    "profiler": ["framework"],
}

_DEVICE_SUFFIXES = [".cu", ".hip"]

def _is_device_source(path):
    for suffix in _DEVICE_SUFFIXES:
        if path.endswith(suffix):
            return True
    return False

def device_backend(
        name,
        extension,
        sources,
        kernel_library = None,
        target_compatible_with = [],
        module_deps = {},
        kernel_defines = [],
        extension_linkopts = [],
        extension_linker_inputs = [],
        generated = {}):
    """Stamps out a backend's standard targets (see the file docstring).

    Args:
      name: the backend, also its directory under third_device/ and its Python package.
      extension: the Python extension's module name, e.g. "_CUDAC".
      sources: dict module -> repository-relative sources (the backend's
        build_variables.bzl's backend_sources()).
      kernel_library: macro that compiles device sources (.cu), e.g. cuda_library;
        None for a backend whose kernels are plain C++.
      target_compatible_with: applied to every target (e.g. requires_cuda()).
      module_deps: dict module (or "headers") -> extra deps (toolkit libraries).
      kernel_defines: defines for device sources, e.g. the qualifiers that
        core's shared op math expands (TORCH_OP_QUALIFIERS).
      extension_linkopts: extra link options of the Python extension
        (e.g. a version script exporting only its PyInit_ symbol).
      extension_linker_inputs: files those link options name.
      generated: labels of generated files, added to what `sources` lists:
        "headers", a module ("aten"), a module's device sources
        ("aten_kernels") and "python" (derived_backend's translated sources).
    """
    if native.package_name() != "third_device/" + name:
        fail("device_backend(name = '%s') must be called from third_device/%s/BUILD.bazel, not //%s" % (name, name, native.package_name()))
    missing = [m for m in BACKEND_MODULES if m not in sources]
    if missing:
        fail("device_backend '%s': no sources for module(s) %s" % (name, ", ".join(missing)))

    # Backends see core; nothing outside the backend (and its tests) sees it
    # (BACKEND_VISIBILITY in tools/layering/policy.bzl).
    visibility = backend_visibility(name)

    # A backend others are derived from (DERIVED_BACKENDS in policy.bzl)
    # exports its C++ sources and version script to them (and otherwise keeps
    # them to itself): before any rule here uses the files. (Its Python files
    # are public already: a BUILD file's wheel target globs them first.)
    readers = derived_readers(name)
    if readers:
        native.exports_files(
            native.glob(["csrc/**", "*.lds", "%s/**/*.py" % name]),
            # (public already, a visibility Bazel lets no other label join)
            visibility = visibility if "//visibility:public" in visibility else visibility + readers,
        )
    common = {
        "target_compatible_with": target_compatible_with,
        "visibility": visibility,
    }

    # Headers are included as "<backend>/csrc/<module>/X.h", like PyTorch's
    # "torch/csrc/..." and torch_npu's "torch_npu/csrc/...".
    cc_library(
        name = "headers",
        hdrs = native.glob(["csrc/**/*.h", "csrc/**/*.cuh"]) + generated.get("headers", []),
        include_prefix = name,
        deps = ["//core:torch_cpu_api"] + module_deps.get("headers", []),
        **common
    )
    for module in BACKEND_MODULES:
        if module == "pybinding":
            continue
        srcs = package_sources(sources[module]) + generated.get(module, [])
        deps = [":headers"] + [":" + d for d in _MODULE_DEPS[module]] + module_deps.get(module, [])
        device_srcs = [s for s in srcs if _is_device_source(s)] + generated.get(module + "_kernels", [])
        if device_srcs:
            if kernel_library == None:
                fail("device_backend '%s': %s lists device sources %s but no kernel_library compiles them" % (name, module, device_srcs))
            kernel_library(
                name = module + "_kernels",
                srcs = device_srcs,
                deps = deps,
                local_defines = kernel_defines,
                alwayslink = True,
                # The kernel rule decides its own compatibility
                # (cuda_library requires CUDA).
                visibility = visibility,
            )
            deps = deps + [":" + module + "_kernels"]
        cc_library(
            name = module,
            srcs = [s for s in srcs if not _is_device_source(s)],
            deps = deps,
            alwayslink = True,
            **common
        )

    pybind_extension(
        name = "%s/%s" % (name, extension),
        srcs = package_sources(sources["pybinding"]) + generated.get("pybinding", []),
        deps = [":" + m for m in BACKEND_MODULES if m != "pybinding"] + module_deps.get("pybinding", []),
        linkopts = extension_linkopts,
        additional_linker_inputs = extension_linker_inputs,
        **common
    )
    native.alias(
        name = "pybinding",
        actual = ":%s/%s.so" % (name, extension),
        visibility = visibility,
    )
    native.alias(
        name = extension,
        actual = ":%s/%s.so" % (name, extension),
        visibility = visibility,
    )
    backend_dev_dist_info(
        name = "dev_dist_info",
        backend = name,
        **common
    )
    py_library(
        name = name,
        srcs = native.glob(["%s/**/*.py" % name]) + generated.get("python", []),
        data = [":%s/%s.so" % (name, extension), ":dev_dist_info"],
        imports = ["."],
        deps = ["//core:torch_core"],
        **common
    )
    _conformance_test(name, target_compatible_with)

    # Every select() branch of the targets above, and no public target in
    # the package (tools/layering/graph.bzl). Targets a backend's BUILD file
    # adds go before device_backend().
    layer_graph_test(
        name = "layering_graph_test",
        layer = "backend",
        backend = name,
    )

def _conformance_test(name, target_compatible_with):
    """:conformance_test: core's conformance suite (//tests:conformance) on this backend.

    The suite finds the backend through TORCHSPLIT_CONFORMANCE_BACKENDS and
    its test adapter (<package>.testing.ADAPTER, else core's defaults).
    """
    pytest_test(
        name = "conformance_test",
        size = "medium",
        srcs = conformance_labels(),
        env = {"TORCHSPLIT_CONFORMANCE_BACKENDS": name},
        target_compatible_with = target_compatible_with,
        deps = [
            ":" + name,
            "//core:torch_core",
        ],
    )
