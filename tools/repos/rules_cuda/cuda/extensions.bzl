"""bzlmod entry point (Bazel >= 7), named as in bazel-contrib/rules_cuda."""

load("//cuda/private:cuda_wheels.bzl", "cuda_wheels")
load("//cuda/private:local_cuda.bzl", "local_cuda")

_local_toolchain = tag_class(attrs = {
    "hermetic_locks": attr.string_dict(),
    "name": attr.string(default = "local_cuda"),
    "toolkit_visibility": attr.string_list(default = ["//visibility:public"]),
})

_wheels = tag_class(attrs = {
    "hermetic_locks": attr.string_dict(),
    "name": attr.string(default = "cuda_wheels"),
    "wheel_visibility": attr.string_list(default = ["//visibility:public"]),
})

def _toolchain_impl(module_ctx):
    for mod in module_ctx.modules:
        for tag in mod.tags.local_toolchain:
            local_cuda(name = tag.name, toolkit_visibility = tag.toolkit_visibility, locks = tag.hermetic_locks)
        for tag in mod.tags.wheels:
            cuda_wheels(name = tag.name, wheel_visibility = tag.wheel_visibility, locks = tag.hermetic_locks)

toolchain = module_extension(
    implementation = _toolchain_impl,
    tag_classes = {"local_toolchain": _local_toolchain, "wheels": _wheels},
)
