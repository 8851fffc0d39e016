"""A C++ library that is linked once, as a shared object, and used through it."""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library")

def shared_cc_library(name, srcs, hdrs, deps = [], includes = [], visibility = None, api_visibility = None, **kwargs):
    """Stamps out <name> (objects), lib<name>.so, and <name>_api (links the .so).

    Process-wide registries (device types, kernels, allocators) must exist once
    even when several Python extensions load them, so extensions and backends
    depend on <name>_api, which links lib<name>.so dynamically, never on the
    objects in <name>.

    Args:
      name: library name, e.g. "torch_cpu".
      srcs: C++ sources.
      hdrs: public headers.
      deps: C++ dependencies of the sources.
      includes: include directories, relative to the package.
      visibility: visibility of <name> and lib<name>.so.
      api_visibility: visibility of <name>_api.
      **kwargs: further cc_library attributes for <name>.
    """
    cc_library(
        name = name,
        srcs = srcs,
        hdrs = hdrs,
        includes = includes,
        deps = deps,
        alwayslink = True,
        # No implicit lib<name>.so from the cc_library: ours is the only one.
        linkstatic = True,
        visibility = visibility,
        **kwargs
    )
    cc_binary(
        name = "lib%s.so" % name,
        linkshared = True,
        linkopts = ["-Wl,-soname,lib%s.so" % name],
        deps = [":" + name],
        visibility = visibility,
    )
    cc_library(
        name = name + "_api",
        srcs = [":lib%s.so" % name],
        hdrs = hdrs,
        includes = includes,
        deps = deps,
        visibility = api_visibility,
    )
