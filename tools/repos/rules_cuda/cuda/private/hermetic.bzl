"""Where the hermetic CUDA toolkit pinned by a lock file is installed.

A lock is a pip `--require-hashes` requirements file
(`nvidia-cuda-nvcc==13.0.88 --hash=sha256:...`). tools/dev bootstrap installs
each lock once with `pip install --no-deps --require-hashes --target
<cache>/<sha256 of the lock>`, so the directory's name changes with any pin
and a stale install is never used. Repository rules only read that directory:
the build stays offline.

Selection (JAX's spelling): `--repo_env=HERMETIC_CUDA_VERSION=<version>` picks a
pinned lock (default: the first one listed), `HERMETIC_CUDA_VERSION=system` or a
`$CUDA_PATH` in the environment picks the machine's toolkit instead.
"""

HERMETIC_ENVIRON = ["HERMETIC_CUDA_VERSION", "CUDA_PATH", "HOME", "TORCHSPLIT_CUDA_CACHE"]

def lock_versions(rctx, lock):
    """Returns {distribution: version} for the pins of a lock file.

    Args:
      rctx: the repository context.
      lock: the lock file's path.

    Returns:
      A dict of strings.
    """
    pins = {}
    for line in rctx.read(lock).splitlines():
        line = line.strip()
        if line.startswith("#") or "==" not in line:
            continue
        dist, rest = line.split("==", 1)
        pins[dist.strip()] = rest.replace("\\", " ").strip().split(" ")[0]
    return pins

def select_toolkit(rctx, locks):
    """Decides between the hermetic toolkit and the machine's.

    Args:
      rctx: the repository context.
      locks: {version: lock file label}; empty means "system toolkit only".

    Returns:
      A struct: system (bool); when not system, version, dir (the install
      directory, or None when it is missing), pins ({dist: version}) and how
      (a sentence for the generated BUILD file and error messages).
    """
    env = rctx.os.environ
    wanted = env.get("HERMETIC_CUDA_VERSION", "")
    if not locks or wanted == "system" or (env.get("CUDA_PATH") != None and not wanted):
        return struct(system = True)
    versions = list(locks.keys())
    version = wanted or versions[0]
    if version not in locks:
        fail("HERMETIC_CUDA_VERSION=%s is not pinned: choose one of %s, or system" % (version, ", ".join(versions)))
    lock = rctx.path(Label(locks[version]))
    result = rctx.execute(["sha256sum", str(lock)])
    if result.return_code != 0:
        fail("sha256sum %s failed: %s" % (lock, result.stderr))
    digest = result.stdout.strip().split(" ")[0]
    cache = env.get("TORCHSPLIT_CUDA_CACHE") or "%s/.cache/torchsplit/cuda" % env.get("HOME", "")
    directory = "%s/%s" % (cache, digest)
    pins = lock_versions(rctx, lock)
    if not rctx.path(directory + "/.torchsplit-installed").exists:
        flags = "" if version == versions[0] else " --repo_env=HERMETIC_CUDA_VERSION=" + version
        how = "hermetic CUDA %s (%s) is not installed in %s: run tools/dev bootstrap%s" % (version, locks[version], directory, flags)
        return struct(system = False, version = version, dir = None, pins = pins, how = how)
    how = "hermetic CUDA %s from %s" % (version, locks[version])
    return struct(system = False, version = version, dir = directory, pins = pins, how = how)
