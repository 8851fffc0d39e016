"""Repository rules that expose Python's and pybind11's headers (no download).

python_configure(name = "local_config_python") gives
@local_config_python//:python_headers from the interpreter's sysconfig
(and PYTHON_TAG, e.g. "cp311", in @local_config_python//:python_tag.bzl);
pybind11_configure(name = "pybind11") gives @pybind11//:pybind11 from the
pybind11 pip package (pybind11.get_include()). The interpreter is the one
@rules_python resolves ($PYTHON_BIN_PATH, else python3 on PATH).
"""

load("@rules_python//python:interpreter.bzl", "PYTHON_ENVIRON", "find_python", "run_python")

def _python_configure_impl(rctx):
    python = find_python(rctx)
    include = run_python(rctx, python, "import sysconfig; print(sysconfig.get_paths()['include'])")
    if not rctx.path(include + "/Python.h").exists:
        fail("%s has no Python.h: install the Python development headers for %s" % (include, python))
    rctx.symlink(include, "include")
    rctx.template("BUILD.bazel", rctx.attr._build_tpl, {"%{python}": python})

    # The ABI the extensions are built for, for wheel file names (cp311).
    tag = run_python(rctx, python, "import sys; print('cp%d%d' % sys.version_info[:2])")
    rctx.file("python_tag.bzl", "\"\"\"The interpreter's wheel tag.\"\"\"\n\nPYTHON_TAG = \"%s\"\n" % tag)

python_configure = repository_rule(
    implementation = _python_configure_impl,
    environ = PYTHON_ENVIRON,
    local = True,
    attrs = {"_build_tpl": attr.label(default = "//:local_config_python.BUILD.tpl")},
    doc = "Exposes the interpreter's C headers as :python_headers.",
)

def _pybind11_configure_impl(rctx):
    python = find_python(rctx)
    result = rctx.execute([python, "-c", "import pybind11; print(pybind11.get_include()); print(pybind11.__version__)"])
    if result.return_code != 0:
        fail("pybind11 is not installed for %s: run tools/dev (or pip install pybind11)\n%s" % (python, result.stderr))
    include, version = result.stdout.strip().split("\n")
    rctx.symlink(include, "include")
    rctx.template("BUILD.bazel", rctx.attr._build_tpl, {"%{version}": version})

pybind11_configure = repository_rule(
    implementation = _pybind11_configure_impl,
    environ = PYTHON_ENVIRON,
    local = True,
    attrs = {"_build_tpl": attr.label(default = "//:pybind11.BUILD.tpl")},
    doc = "Exposes the pybind11 pip package's headers as :pybind11.",
)
