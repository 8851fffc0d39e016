"""Registers the local interpreter as Bazel's Python toolchain (no download)."""

load("//python:interpreter.bzl", "PYTHON_ENVIRON", "find_python", "run_python")

def _local_python_impl(rctx):
    python = find_python(rctx)
    version = run_python(rctx, python, "import sys; print('%d.%d' % sys.version_info[:2])")
    rctx.template("BUILD.bazel", rctx.attr._build_tpl, {
        "%{interpreter}": python,
        "%{version}": version,
    })

local_python_toolchain = repository_rule(
    implementation = _local_python_impl,
    environ = PYTHON_ENVIRON,
    local = True,
    attrs = {"_build_tpl": attr.label(default = "//python/private:local_python.BUILD.tpl")},
    doc = "A py_runtime_pair toolchain for the local interpreter; register @<name>//:toolchain.",
)
