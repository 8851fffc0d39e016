"""bzlmod entry point (Bazel >= 7): Python's and pybind11's headers from the local interpreter."""

load("//:python_configure.bzl", "pybind11_configure", "python_configure")

_named = tag_class(attrs = {"name": attr.string()})

def _pybind11_impl(module_ctx):
    for mod in module_ctx.modules:
        for tag in mod.tags.python_headers:
            python_configure(name = tag.name)
        for tag in mod.tags.headers:
            pybind11_configure(name = tag.name)

pybind11 = module_extension(
    implementation = _pybind11_impl,
    tag_classes = {"headers": _named, "python_headers": _named},
)
