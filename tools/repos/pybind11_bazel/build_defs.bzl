"""pybind_extension and pybind_library, with pybind11_bazel's names and attributes."""

PYBIND_COPTS = ["-fexceptions", "-fvisibility=hidden"]

PYBIND_FEATURES = ["-use_header_modules", "-parse_headers"]

PYBIND_DEPS = ["@pybind11//:pybind11"]

def pybind_extension(name, copts = [], features = [], linkopts = [], tags = [], deps = [], **kwargs):
    """A Python extension module built from C++: produces <name>.so.

    Python symbols are resolved from the importing interpreter at load time,
    so libpython is not linked.

    Args:
      name: module name; `pkg/_C` produces pkg/_C.so.
      copts: extra compiler options.
      features: extra features.
      linkopts: extra linker options.
      tags: tags.
      deps: C++ dependencies.
      **kwargs: other cc_binary attributes (srcs, visibility, data, ...).
    """
    native.cc_binary(
        name = name + ".so",
        copts = copts + PYBIND_COPTS,
        features = features + PYBIND_FEATURES,
        linkopts = linkopts,
        linkshared = True,
        tags = tags,
        deps = deps + PYBIND_DEPS,
        **kwargs
    )

def pybind_library(name, copts = [], features = [], deps = [], **kwargs):
    """A cc_library that uses pybind11 (for code shared between extensions).

    Args:
      name: target name.
      copts: extra compiler options.
      features: extra features.
      deps: C++ dependencies.
      **kwargs: other cc_library attributes.
    """
    native.cc_library(
        name = name,
        copts = copts + PYBIND_COPTS,
        features = features + PYBIND_FEATURES,
        deps = deps + PYBIND_DEPS,
        **kwargs
    )
