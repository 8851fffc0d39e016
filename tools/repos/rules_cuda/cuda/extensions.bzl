"""bzlmod entry point (Bazel >= 7), named as in bazel-contrib/rules_cuda."""

load("//cuda/private:local_cuda.bzl", "local_cuda")

_local_toolchain = tag_class(attrs = {
    "name": attr.string(default = "local_cuda"),
    "toolkit_visibility": attr.string_list(default = ["//visibility:public"]),
})

def _toolchain_impl(module_ctx):
    for mod in module_ctx.modules:
        for tag in mod.tags.local_toolchain:
            local_cuda(name = tag.name, toolkit_visibility = tag.toolkit_visibility)

toolchain = module_extension(
    implementation = _toolchain_impl,
    tag_classes = {"local_toolchain": _local_toolchain},
)
