"""Repository rule that finds NVIDIA's CUDA library wheels and exposes them as @cuda_wheels.

NVRTC and NCCL come from PyPI wheels (`nvidia-cuda-nvrtc`, `nvidia-nccl-cu13`).
By default they are the ones pinned by the hermetic toolkit's lock, on its
line, read from the same install directory as @local_cuda (hermetic.bzl).
With the system toolkit (HERMETIC_CUDA_VERSION=system or $CUDA_PATH) they are
the wheels of the project's Python: this rule then runs that interpreter (rules_python's find_python:
$PYTHON_BIN_PATH, else python3 on PATH), asks importlib where the `nvidia`
namespace package's files are, and symlinks each header and library into the
repository, so labels and action command lines only ever name
`external/cuda_wheels/...` (no machine path enters an action key).

Targets, for each of `nvrtc` and `nccl`:

  :<lib>_headers  the header (always exists; empty without the wheel). With the
                  wheel it defines CUDA_WHEELS_HAVE_<LIB>=1, so code that
                  loads the library at run time can compile a clear fallback.
  :<lib>          header + shared library to link against; incompatible
                  without the wheel (Bazel names :<lib>_wheel_not_installed).
  :<lib>_libs     the shared libraries as files (runfiles data).

defs.bzl records NVRTC_FOUND / NVRTC_VERSION / NCCL_FOUND / NCCL_VERSION and
how they were found.
"""

load("@rules_python//python:interpreter.bzl", "PYTHON_ENVIRON", "find_python")
load("//cuda/private:hermetic.bzl", "HERMETIC_ENVIRON", "select_toolkit")

# Prints JSON: per library, the wheel's version and the files to expose.
# Wheel layouts: CUDA 13 wheels put NVRTC under nvidia/cu13/ (shared with other
# cu13 wheels, hence single files), CUDA 12 ones under nvidia/cuda_nvrtc/;
# NCCL under nvidia/nccl/.
_LOCATE = """
import glob, importlib.metadata, importlib.util, json, os
spec = importlib.util.find_spec("nvidia")
roots = list(spec.submodule_search_locations) if spec and spec.submodule_search_locations else []
def version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None
def locate(dist, subdirs, header, lib_glob, whole_include):
    found = {"version": version(dist), "headers": [], "libs": []}
    if found["version"] is None:
        return found
    for root in roots:
        for sub in subdirs:
            include = os.path.join(root, sub, "include")
            if os.path.isfile(os.path.join(include, header)):
                libs = sorted(glob.glob(os.path.join(root, sub, "lib", lib_glob)))
                if not libs:
                    continue
                if whole_include:
                    found["headers"] = [include + "/"]
                else:
                    found["headers"] = [os.path.join(include, header)]
                found["libs"] = libs
                return found
    return found
print(json.dumps({
    "nvrtc": locate("nvidia-cuda-nvrtc", ["cu13", "cuda_nvrtc"], "nvrtc.h", "libnvrtc*.so*", False),
    "nccl": locate("nvidia-nccl-cu13", ["nccl"], "nccl.h", "libnccl.so*", True),
}))
"""

_LIBS = {
    "nccl": ("NCCL", "nvidia-nccl-cu13", "libnccl.so.2"),
    "nvrtc": ("NVRTC", "nvidia-cuda-nvrtc", "libnvrtc.so."),
}

def _basename(path):
    return path.rstrip("/").split("/")[-1]

def _found_build(lib, upper, info):
    headers = info["headers"]
    lib_names = [_basename(p) for p in info["libs"]]

    # The library to link: the SONAME file (libnccl.so.2, libnvrtc.so.13),
    # not the -builtins / .alt variants beside it.
    main = [n for n in lib_names if n.startswith(_LIBS[lib][2]) or n == _LIBS[lib][2]]
    if not main:
        main = lib_names[:1]
    if headers[0].endswith("/"):
        hdrs = "glob([\"%s/include/**\"])" % lib
    else:
        hdrs = repr(["%s/include/%s" % (lib, _basename(headers[0]))])
    return """
cc_library(
    name = "{lib}_headers",
    hdrs = {hdrs},
    defines = ["CUDA_WHEELS_HAVE_{upper}=1"],
    includes = ["{lib}/include"],
)

cc_import(
    name = "{lib}_import",
    shared_library = "{lib}/lib/{main}",
)

cc_library(
    name = "{lib}",
    deps = [":{lib}_headers", ":{lib}_import"],
)

filegroup(
    name = "{lib}_libs",
    srcs = {libs},
)
""".format(lib = lib, upper = upper, hdrs = hdrs, main = main[0], libs = repr(["%s/lib/%s" % (lib, n) for n in lib_names]))

def _missing_build(lib, why):
    return """
# {why}
cc_library(name = "{lib}_headers")

cc_library(
    name = "{lib}",
    target_compatible_with = [":{lib}_wheel_not_installed"],
)

filegroup(name = "{lib}_libs")
""".format(lib = lib, why = why)

def _libs_in(rctx, directory, prefix):
    path = rctx.path(directory)
    if not path.exists:
        return []
    return sorted([str(p) for p in path.readdir() if p.basename.startswith(prefix) and ".so" in p.basename])

def _locate_hermetic(rctx, toolkit):
    """The same answer as _LOCATE's, from the hermetic lock's install directory."""
    root = toolkit.dir + "/nvidia"
    nvrtc_h = root + "/cu13/include/nvrtc.h"
    nccl_h = root + "/nccl/include/nccl.h"
    return {
        "nccl": {
            "headers": [root + "/nccl/include/"] if rctx.path(nccl_h).exists else [],
            "libs": _libs_in(rctx, root + "/nccl/lib", "libnccl.so"),
            "version": toolkit.pins.get("nvidia-nccl-cu13"),
        },
        "nvrtc": {
            "headers": [nvrtc_h] if rctx.path(nvrtc_h).exists else [],
            "libs": _libs_in(rctx, root + "/cu13/lib", "libnvrtc"),
            "version": toolkit.pins.get("nvidia-cuda-nvrtc"),
        },
    }

def _cuda_wheels_impl(rctx):
    toolkit = select_toolkit(rctx, rctx.attr.locks)
    if toolkit.system:
        python = find_python(rctx)
        result = rctx.execute([python, "-c", _LOCATE])
        if result.return_code != 0:
            fail("@%s: %s could not look for the CUDA wheels:\n%s" % (rctx.name, python, result.stderr))
        found = json.decode(result.stdout.strip())
        source = "for " + python
    elif toolkit.dir == None:
        found = {lib: {"headers": [], "libs": [], "version": None} for lib in _LIBS}
        source = "in the " + toolkit.how
    else:
        found = _locate_hermetic(rctx, toolkit)
        source = "by the lock of the " + toolkit.how
    build = [
        "# Generated by @rules_cuda's cuda_wheels from the wheels installed %s." % source,
        "package(default_visibility = %r)" % rctx.attr.wheel_visibility,
        "",
        "# A constraint no platform provides: a target listing one of its values is",
        "# incompatible, and Bazel names the value (the wheel that is missing).",
        "constraint_setting(name = \"wheel_availability\")",
    ]
    defs = []
    for lib in sorted(_LIBS):
        upper, dist, _ = _LIBS[lib]
        info = found[lib]
        build.append("constraint_value(name = \"%s_wheel_not_installed\", constraint_setting = \":wheel_availability\")" % lib)
        if info["version"] != None and info["headers"] and info["libs"]:
            header = info["headers"][0]
            if header.endswith("/"):
                rctx.symlink(header.rstrip("/"), lib + "/include")
            else:
                rctx.symlink(header, lib + "/include/" + _basename(header))
            for path in info["libs"]:
                rctx.symlink(path, lib + "/lib/" + _basename(path))
            build.append(_found_build(lib, upper, info))
            defs.append("%s_FOUND = True\n%s_VERSION = %r\n" % (upper, upper, info["version"]))
        else:
            if info["version"] == None:
                why = "the %s wheel is not installed %s" % (dist, source)
            else:
                why = "the %s %s wheel has no header or library in the expected place" % (dist, info["version"])
            build.append(_missing_build(lib, why))
            defs.append("%s_FOUND = False\n%s_VERSION = None\n" % (upper, upper))
    build.append(_lock_build(rctx, toolkit))
    rctx.file("BUILD.bazel", "\n".join(build) + "\n")
    rctx.file("defs.bzl", "\"\"\"What @%s found.\"\"\"\n\n" % rctx.name + "".join(defs))

def _lock_build(rctx, toolkit):
    """requirements_lock.txt: the lock of the toolkit this build uses.

    A backend's wheel pins NVIDIA's runtime wheels from it, so a build with
    another pinned toolkit ships matching pins. A system toolkit has no lock of
    its own: the first pinned one stands in (the wheels pip can install).
    """
    locks = rctx.attr.locks
    if not locks:
        rctx.file("requirements_lock.txt", "# no hermetic CUDA lock is configured\n")
    else:
        version = list(locks.keys())[0] if toolkit.system else toolkit.version
        rctx.symlink(rctx.path(Label(locks[version])), "requirements_lock.txt")
    return "exports_files([\"requirements_lock.txt\"], visibility = %r)" % rctx.attr.wheel_visibility

cuda_wheels = repository_rule(
    implementation = _cuda_wheels_impl,
    environ = PYTHON_ENVIRON + HERMETIC_ENVIRON,
    local = True,
    attrs = {
        "locks": attr.string_dict(
            doc = "Hermetic toolkits: {version: label of its pip lock file}, as given to @local_cuda.",
        ),
        "wheel_visibility": attr.string_list(
            default = ["//visibility:public"],
            doc = "Who may depend on the wheels' targets.",
        ),
    },
    doc = "Finds the nvidia-cuda-nvrtc and nvidia-nccl-cu13 wheels of the hermetic lock, or of the build's Python.",
)
