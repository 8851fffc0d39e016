"""Repository rule that provides the CUDA toolkit as @local_cuda.

By default the toolkit is the hermetic one pinned by a lock file (hermetic.bzl):
NVIDIA's pip wheels, installed by tools/dev bootstrap into a directory keyed by
the lock's hash, symlinked here so that every label and action names only
`external/local_cuda/...`. With HERMETIC_CUDA_VERSION=system (or $CUDA_PATH
set) it detects the machine's toolkit instead.

System detection order (upstream rules_cuda's): $CUDA_PATH when set (authoritative:
set but without bin/nvcc means "no toolkit"), then `nvcc` on PATH resolved
through symlinks and thin wrapper scripts, then /usr/local/cuda. With no
toolkit the repository still exists, its targets are empty and
TOOLKIT_FOUND is False, which makes every CUDA target incompatible.
"""

load("//cuda/private:hermetic.bzl", "HERMETIC_ENVIRON", "select_toolkit")

def _is_toolkit(rctx, path):
    return path != None and rctx.path(path + "/bin/nvcc").exists

def _wrapped_nvcc(rctx, script):
    """Returns the nvcc a wrapper script execs (an absolute path ending in /bin/nvcc), or None."""
    content = rctx.read(script)
    if not content.startswith("#!"):
        return None
    for token in content.replace("\"", " ").replace("'", " ").replace("\t", " ").replace("\n", " ").split(" "):
        if token.startswith("/") and token.endswith("/bin/nvcc") and rctx.path(token).exists:
            return token
    return None

def _toolkit_from_path(rctx):
    nvcc = rctx.which("nvcc")
    if nvcc == None:
        return None
    nvcc = nvcc.realpath
    for _ in range(4):
        wrapped = _wrapped_nvcc(rctx, nvcc)
        if wrapped == None:
            break
        nvcc = rctx.path(wrapped).realpath
    return str(nvcc.dirname.dirname)

def detect_toolkit(rctx):
    """Finds the CUDA toolkit.

    Args:
      rctx: the repository context.

    Returns:
      (path or None, a sentence saying how it was found or why not).
    """
    cuda_path = rctx.os.environ.get("CUDA_PATH")
    if cuda_path != None:
        if _is_toolkit(rctx, cuda_path):
            return str(rctx.path(cuda_path).realpath), "from $CUDA_PATH=" + cuda_path
        return None, "$CUDA_PATH=%s has no bin/nvcc" % cuda_path
    from_path = _toolkit_from_path(rctx)
    if _is_toolkit(rctx, from_path):
        return from_path, "from nvcc on $PATH"
    if _is_toolkit(rctx, "/usr/local/cuda"):
        return str(rctx.path("/usr/local/cuda").realpath), "from /usr/local/cuda"
    return None, "no $CUDA_PATH, no nvcc on $PATH and no /usr/local/cuda"

def _toolkit_version(rctx, path):
    """The toolkit's "X.Y" from `nvcc --version` ("... release 13.0, V13.0.88")."""
    result = rctx.execute([path + "/bin/nvcc", "--version"])
    marker = "release "
    at = result.stdout.find(marker)
    if result.return_code != 0 or at < 0:
        return "unknown"
    start = at + len(marker)
    return result.stdout[start:result.stdout.find(",", start)]

def _missing(rctx, how):
    rctx.file("defs.bzl", "TOOLKIT_FOUND = False\nTOOLKIT_VERSION = None\nDETECTION = %r\n" % how)

    # Bazel still resolves an incompatible target's implicit attributes,
    # so nvcc must be one file; this one explains itself if ever run.
    rctx.file("bin/nvcc", "#!/bin/sh\necho 'no CUDA toolkit: %s' >&2\nexit 1\n" % how.replace("'", ""), executable = True)
    rctx.template("BUILD.bazel", rctx.attr._build_missing, {
        "%{detection}": how,
        "%{visibility}": repr(rctx.attr.toolkit_visibility),
    })

def _soname_file(rctx, directory, stem):
    """The soname-versioned file of a library, e.g. libcudart.so.13 for "libcudart".

    Args:
      rctx: the repository context.
      directory: the directory to look in (a path in the repository).
      stem: the library's name without ".so".

    Returns:
      The basename `<stem>.so.<major>` when exactly such a file exists, else `<stem>.so`.
    """
    path = rctx.path(directory)
    prefix = stem + ".so."
    found = sorted([
        p.basename
        for p in (path.readdir() if path.exists else [])
        if p.basename.startswith(prefix) and p.basename[len(prefix):].isdigit()
    ])
    return found[0] if len(found) == 1 else stem + ".so"

def _found(rctx, version, how, cupti):
    rctx.file("defs.bzl", "TOOLKIT_FOUND = True\nTOOLKIT_VERSION = %r\nDETECTION = %r\n" % (version, how))
    rctx.template("BUILD.bazel", rctx.attr._build_found, {
        "%{cudart}": _soname_file(rctx, "lib64", "libcudart"),
        "%{cupti}": cupti,
        "%{detection}": how,
        "%{version}": version,
        "%{visibility}": repr(rctx.attr.toolkit_visibility),
    })

_SYSTEM_CUPTI = """cc_import(
    name = "cupti_import",
    shared_library = "lib64/%s",
)

cc_library(
    name = "cupti",
    deps = [":cupti_import", ":headers"],
)"""

# The lock pins no CUPTI wheel (nothing links it); naming the target says so.
_HERMETIC_CUPTI = """constraint_setting(name = "cupti_availability")

constraint_value(
    name = "cupti_not_in_the_hermetic_lock",
    constraint_setting = ":cupti_availability",
)

cc_library(
    name = "cupti",
    target_compatible_with = [":cupti_not_in_the_hermetic_lock"],
)"""

def _hermetic(rctx, toolkit):
    root = toolkit.dir + "/nvidia/cu13"
    for entry in ["bin", "include", "nvvm"]:
        rctx.symlink(root + "/" + entry, entry)

    # The system toolkit's name for the library directory, so one BUILD template serves both.
    rctx.symlink(root + "/lib", "lib64")
    _found(rctx, toolkit.pins.get("nvidia-cuda-nvcc", toolkit.version), toolkit.how, _HERMETIC_CUPTI)

def _local_cuda_impl(rctx):
    toolkit = select_toolkit(rctx, rctx.attr.locks)
    if not toolkit.system:
        if toolkit.dir == None:
            _missing(rctx, toolkit.how)
        else:
            _hermetic(rctx, toolkit)
        return
    path, how = detect_toolkit(rctx)
    if path == None:
        _missing(rctx, how)
        return
    for entry in ["bin", "include", "lib64", "nvvm", "extras"]:
        if rctx.path(path + "/" + entry).exists:
            rctx.symlink(path + "/" + entry, entry)
    _found(rctx, _toolkit_version(rctx, path), how, _SYSTEM_CUPTI % _soname_file(rctx, "lib64", "libcupti"))

local_cuda = repository_rule(
    implementation = _local_cuda_impl,
    environ = HERMETIC_ENVIRON + ["PATH"],
    local = True,
    attrs = {
        "locks": attr.string_dict(
            doc = "Hermetic toolkits: {version: label of its pip lock file}; the first is the default. Empty: system toolkit only.",
        ),
        "toolkit_visibility": attr.string_list(
            default = ["//visibility:public"],
            doc = "Who may depend on the toolkit's targets, e.g. [\"@//third_device:__subpackages__\"].",
        ),
        "_build_found": attr.label(default = "//cuda/private:local_cuda_found.BUILD.tpl"),
        "_build_missing": attr.label(default = "//cuda/private:local_cuda_missing.BUILD.tpl"),
    },
    doc = "Provides the hermetic CUDA toolkit pinned by a lock, or the machine's, as a repository.",
)
