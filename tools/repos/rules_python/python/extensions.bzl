"""bzlmod entry point (Bazel >= 7): the local interpreter as the Python toolchain."""

load("//python:repositories.bzl", "local_python_toolchain")

_local_toolchain = tag_class(attrs = {"name": attr.string(default = "local_python")})

def _python_impl(module_ctx):
    for mod in module_ctx.modules:
        for tag in mod.tags.local_toolchain:
            local_python_toolchain(name = tag.name)

python = module_extension(
    implementation = _python_impl,
    tag_classes = {"local_toolchain": _local_toolchain},
)
