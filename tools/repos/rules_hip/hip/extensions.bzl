"""bzlmod entry point (Bazel >= 7): the same repositories as repositories.bzl."""

load("//hip/private:hipify_mappings.bzl", "hipify_mappings")
load("//hip/private:local_hip.bzl", "local_hip")

_local_toolchain = tag_class(attrs = {
    "name": attr.string(default = "local_hip"),
    "toolkit_visibility": attr.string_list(default = ["//visibility:public"]),
})

_mappings = tag_class(attrs = {
    "name": attr.string(default = "hipify_mappings"),
})

def _toolchain_impl(module_ctx):
    for mod in module_ctx.modules:
        for tag in mod.tags.local_toolchain:
            local_hip(name = tag.name, toolkit_visibility = tag.toolkit_visibility)
        for tag in mod.tags.hipify_mappings:
            hipify_mappings(name = tag.name)

toolchain = module_extension(
    implementation = _toolchain_impl,
    tag_classes = {"hipify_mappings": _mappings, "local_toolchain": _local_toolchain},
)
