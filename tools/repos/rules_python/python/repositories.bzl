"""Registers the local interpreter as Bazel's Python toolchain (no download).

The interpreter's absolute path must not reach action keys: a py_runtime with
`interpreter_path` writes it into every py_binary/py_test stub, so a venv under
another $HOME (or another checkout's venv) changes every test action's key and
misses the remote cache. Instead the repository holds
  - `prefix`, a symlink to the interpreter's sys.prefix (the venv itself, so
    Python still finds pyvenv.cfg and the venv's packages), and
  - `python3`, a launcher script that execs `prefix/<bin>/python3` relative to
    its own resolved location. Its text names no machine path, only what the
    environment *is*: the Python version and a digest of the installed
    distributions (name==version), so a different package set still changes
    the key, a different location does not.
"""

load("//python:interpreter.bzl", "PYTHON_ENVIRON", "find_python", "run_python")

# Prints: sys.prefix, the interpreter's path relative to it, the version, and a
# sha256 over the sorted "name==version" of every installed distribution.
_DESCRIBE = """
import hashlib, importlib.metadata as md, os, sys
exe = os.path.abspath(sys.executable)
rel = os.path.relpath(exe, sys.prefix)
dists = sorted({"%s==%s" % (d.metadata["Name"], d.version) for d in md.distributions()})
print(sys.prefix)
print(rel if not rel.startswith("..") else "")
print("%d.%d.%d" % sys.version_info[:3])
print(hashlib.sha256("\\n".join(dists).encode()).hexdigest())
"""

def _local_python_impl(rctx):
    python = find_python(rctx)
    prefix, rel, version, packages = run_python(rctx, python, _DESCRIBE).split("\n")
    if rel:
        rctx.symlink(prefix, "prefix")
        exec_line = 'exec "$(dirname "$(readlink -f "$0")")/prefix/%s" "$@"' % rel
    else:
        # The interpreter lives outside its sys.prefix: fall back to its path.
        exec_line = 'exec "%s" "$@"' % python
    rctx.file("python3", "\n".join([
        "#!/bin/sh",
        "# Python %s; installed distributions sha256:%s" % (version, packages),
        exec_line,
        "",
    ]), executable = True)
    rctx.template("BUILD.bazel", rctx.attr._build_tpl, {
        "%{version}": version.rsplit(".", 1)[0],
    })

local_python_toolchain = repository_rule(
    implementation = _local_python_impl,
    environ = PYTHON_ENVIRON,
    local = True,
    attrs = {"_build_tpl": attr.label(default = "//python/private:local_python.BUILD.tpl")},
    doc = "A py_runtime_pair toolchain for the local interpreter; register @<name>//:toolchain.",
)
