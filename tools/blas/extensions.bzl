"""bzlmod entry point (Bazel >= 7) of the cpu_blas repository rule (blas.bzl)."""

load("//tools/blas:blas.bzl", "cpu_blas")

_library = tag_class(attrs = {
    "blas_visibility": attr.string_list(default = ["//visibility:public"]),
    "lock": attr.string(mandatory = True),
    "name": attr.string(default = "cpu_blas"),
})

def _cpu_blas_impl(module_ctx):
    for mod in module_ctx.modules:
        for tag in mod.tags.library:
            cpu_blas(name = tag.name, blas_visibility = tag.blas_visibility, lock = tag.lock)

blas = module_extension(
    implementation = _cpu_blas_impl,
    tag_classes = {"library": _library},
)
