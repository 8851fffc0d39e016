"""A C++ library that is linked once, as a shared object, and used through it."""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library")

def shared_cc_library(
        name,
        shared_name,
        srcs,
        hdrs,
        deps = [],
        private_deps = [],
        shared_deps = [],
        includes = [],
        visibility = None,
        api_visibility = None,
        **kwargs):
    """Stamps out <name> (objects), lib<shared_name>.so, and <name>_api (links the .so).

    Process-wide registries (device types, kernels, allocators) must exist once
    even when several Python extensions load them, so extensions and backends
    depend on <name>_api, which links lib<shared_name>.so dynamically, never
    on the objects in <name>.

    The shared object's name is its soname, unique in a process: choose one no
    other library loaded beside it uses (PyTorch's own is libtorch_cpu.so).

    Args:
      name: library name, e.g. "torch_cpu".
      shared_name: the shared object is lib<shared_name>.so.
      srcs: C++ sources.
      hdrs: public headers.
      deps: C++ dependencies of the sources and of the headers.
      private_deps: dependencies of the sources alone, linked into the shared
        object and hidden from <name>_api's users (they neither see their
        headers nor link them again).
      shared_deps: shared libraries (cc_import) among private_deps that
        lib<shared_name>.so loads. <name>_api's users link them too: in Bazel's
        output tree lib<shared_name>.so is loaded through a _solib symlink, so
        its own $ORIGIN-relative RUNPATH cannot find them, the user's can.
      includes: include directories, relative to the package.
      visibility: visibility of <name> and lib<shared_name>.so.
      api_visibility: visibility of <name>_api.
      **kwargs: further cc_library attributes for <name>.
    """
    cc_library(
        name = name,
        srcs = srcs,
        hdrs = hdrs,
        includes = includes,
        deps = deps + private_deps,
        alwayslink = True,
        # No implicit lib<name>.so from the cc_library: the shared object is ours.
        linkstatic = True,
        visibility = visibility,
        **kwargs
    )
    cc_binary(
        name = "lib%s.so" % shared_name,
        linkshared = True,
        linkopts = ["-Wl,-soname,lib%s.so" % shared_name],
        deps = [":" + name],
        visibility = visibility,
    )
    cc_library(
        name = name + "_api",
        srcs = [":lib%s.so" % shared_name],
        hdrs = hdrs,
        includes = includes,
        deps = deps + shared_deps,
        visibility = api_visibility,
    )
