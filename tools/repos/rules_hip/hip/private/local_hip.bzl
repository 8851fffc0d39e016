"""Repository rule that provides the machine's HIP (ROCm) toolkit as @local_hip.

Detection order, like rules_cuda's for CUDA: $HIP_PATH when set
(authoritative: set but without bin/hipcc means "no toolkit"), then `hipcc`
on PATH resolved through symlinks, then /opt/rocm. A toolkit is usable when it
has hipcc, the HIP headers, libamdhip64.so and the AMD device libraries
(Debian 12: `apt-get install hipcc libamdhip64-dev rocm-device-libs`).

Without one the repository still exists, its targets are empty and HIP_FOUND
is False, which makes every HIP target incompatible (Bazel then names
@rules_hip//hip:hip_toolkit_not_found). Only files are symlinked here, so
labels and action command lines name `external/local_hip/...`, never a
machine path; version.txt (hipcc's and clang's versions) is an input of every
hipcc action, so another toolkit never reuses this one's cached objects.
"""

_LIB_DIRS = ["lib", "lib64", "lib/x86_64-linux-gnu"]
_BITCODE_DIRS = ["amdgcn/bitcode", "lib/amdgcn/bitcode", "lib/x86_64-linux-gnu/amdgcn/bitcode"]

# hipcc is a perl wrapper that runs hipcc.pl (with hipvars.pm) from its own
# directory, then finds the rest of the toolkit from their resolved paths.
_DRIVER_FILES = ["hipcc", "hipcc.pl", "hipcc.bin", "hipvars.pm", "hipconfig", "hipconfig.pl", ".hipVersion"]
_INSTALL_HINT = "Debian 12: apt-get install hipcc libamdhip64-dev rocm-device-libs (tools/dev bootstrap does)"

def _root_from_path(rctx):
    hipcc = rctx.which("hipcc")
    if hipcc == None:
        return None
    return str(hipcc.realpath.dirname.dirname)

def _first(rctx, root, candidates):
    for candidate in candidates:
        if rctx.path(root + "/" + candidate).exists:
            return candidate
    return None

def detect_toolkit(rctx):
    """Finds the HIP toolkit.

    Args:
      rctx: the repository context.

    Returns:
      (root or None, library directory, a sentence saying how it was found or why not).
    """
    hip_path = rctx.os.environ.get("HIP_PATH")
    if hip_path != None:
        root, how = hip_path, "from $HIP_PATH=" + hip_path
    else:
        root = _root_from_path(rctx)
        how = "from hipcc on $PATH"
        if root == None and rctx.path("/opt/rocm/bin/hipcc").exists:
            root, how = "/opt/rocm", "from /opt/rocm"
        if root == None:
            return None, None, "no $HIP_PATH, no hipcc on $PATH and no /opt/rocm (%s)" % _INSTALL_HINT
    if not rctx.path(root + "/bin/hipcc").exists:
        return None, None, "%s has no bin/hipcc (%s)" % (root, _INSTALL_HINT)
    if not rctx.path(root + "/include/hip/hip_runtime.h").exists:
        return None, None, "hipcc %s, but no include/hip/hip_runtime.h under %s (libamdhip64-dev)" % (how, root)
    lib = None
    for candidate in _LIB_DIRS:
        if rctx.path("%s/%s/libamdhip64.so" % (root, candidate)).exists:
            lib = candidate
            break
    if lib == None:
        return None, None, "hipcc %s, but no libamdhip64.so under %s/{%s} (libamdhip64-dev)" % (how, root, ",".join(_LIB_DIRS))
    if _first(rctx, root, _BITCODE_DIRS) == None:
        return None, None, "hipcc %s, but no AMD device libraries under %s (rocm-device-libs)" % (how, root)
    return str(rctx.path(root).realpath), lib, how

def _versions(rctx, root):
    """hipcc's "HIP version: ..." and its clang's "... clang version ..." lines."""
    result = rctx.execute([root + "/bin/hipcc", "--version"], environment = {"HIP_PLATFORM": "amd"})
    lines = [
        line.strip()
        for line in result.stdout.splitlines()
        if line.startswith("HIP version") or "clang version" in line
    ]
    if result.return_code != 0 or not lines:
        fail("@local_hip: `%s/bin/hipcc --version` failed (%d):\n%s" % (root, result.return_code, result.stderr))
    return lines

def _missing(rctx, how):
    rctx.file("defs.bzl", "HIP_FOUND = False\nHIP_VERSION = None\nDETECTION = %r\n" % how)

    # Bazel still resolves an incompatible target's implicit attributes, so
    # hipcc must be one file; this one explains itself if ever run.
    rctx.file("bin/hipcc", "#!/bin/sh\necho 'no HIP toolkit: %s' >&2\nexit 1\n" % how.replace("'", ""), executable = True)
    rctx.file("version.txt", "no HIP toolkit\n")
    rctx.template("BUILD.bazel", rctx.attr._build_missing, {
        "%{detection}": how,
        "%{visibility}": repr(rctx.attr.toolkit_visibility),
    })

def _local_hip_impl(rctx):
    root, lib, how = detect_toolkit(rctx)
    if root == None:
        _missing(rctx, how)
        return
    versions = _versions(rctx, root)
    version = versions[0].split(":", 1)[-1].strip()
    for name in _DRIVER_FILES:
        if rctx.path(root + "/bin/" + name).exists:
            rctx.symlink(root + "/bin/" + name, "bin/" + name)
    rctx.symlink(root + "/include/hip", "include/hip")
    rctx.symlink("%s/%s/libamdhip64.so" % (root, lib), "lib/libamdhip64.so")
    rctx.file("version.txt", "\n".join(versions) + "\n")
    rctx.file("defs.bzl", "HIP_FOUND = True\nHIP_VERSION = %r\nDETECTION = %r\n" % (version, how))
    rctx.template("BUILD.bazel", rctx.attr._build_found, {
        "%{detection}": how,
        "%{version}": version,
        "%{visibility}": repr(rctx.attr.toolkit_visibility),
    })

local_hip = repository_rule(
    implementation = _local_hip_impl,
    environ = ["HIP_PATH", "PATH"],
    local = True,
    attrs = {
        "toolkit_visibility": attr.string_list(
            default = ["//visibility:public"],
            doc = "Who may depend on the toolkit's targets, e.g. [\"@//third_device:__subpackages__\"].",
        ),
        "_build_found": attr.label(default = "//hip/private:local_hip_found.BUILD.tpl"),
        "_build_missing": attr.label(default = "//hip/private:local_hip_missing.BUILD.tpl"),
    },
    doc = "Provides the machine's HIP toolkit (hipcc, headers, libamdhip64) as a repository.",
)
