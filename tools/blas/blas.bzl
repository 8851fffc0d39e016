"""cpu_blas: the CPU BLAS pinned by a lock file, as a local repository (@cpu_blas).

The lock (tools/blas/requirements_lock.txt) pins one wheel that carries a BLAS
shared library and its pkg-config file, such as the `scipy-openblas32` wheel
NumPy and SciPy build with. tools/dev bootstrap installs it once with `pip
install --no-deps --require-hashes --target <cache>/<sha256 of the lock>`, so
the directory's name changes with any pin and a stale install is never used;
this rule only reads that directory: no build step downloads anything.

What core needs to know about the library comes from its pkg-config file (the
symbol prefix and suffix its Cflags define, its integer width, its library)
and from the table of thread and configuration calls below, and reaches core
as macros in a generated header, cpu_blas.h. Core declares the standard CBLAS
functions it calls through those macros, so no core file names the library.

Targets:

  :blas             cpu_blas.h + the shared library to link against
  :shared_library   the shared library file (bundled into torch_core's wheel)

defs.bzl records BLAS_DISTRIBUTION, BLAS_VERSION and BLAS_SONAME (the file
name the wheel gives the library, its DT_SONAME).
"""

BLAS_ENVIRON = ["HOME", "TORCHSPLIT_BLAS_CACHE"]

# pkg-config Name -> the library's own thread and configuration calls (before
# the symbol prefix). Another implementation adds its row here.
_IMPLEMENTATIONS = {
    "openblas": {
        "CPU_BLAS_GET_CONFIG": "openblas_get_config",
        "CPU_BLAS_GET_NUM_THREADS": "openblas_get_num_threads",
        "CPU_BLAS_SET_NUM_THREADS": "openblas_set_num_threads",
    },
}

def _pins(rctx, lock):
    """[(distribution, version)] of a pip lock file."""
    pins = []
    for line in rctx.read(lock).splitlines():
        line = line.strip()
        if line.startswith("#") or "==" not in line:
            continue
        dist, rest = line.split("==", 1)
        pins.append((dist.strip(), rest.replace("\\", " ").strip().split(" ")[0]))
    return pins

def _pkgconfig_files(rctx, directory):
    """The .pc files under <directory>/<package>/lib/pkgconfig/."""
    found = []
    for package in rctx.path(directory).readdir():
        pkgconfig = package.get_child("lib").get_child("pkgconfig")
        if pkgconfig.exists:
            found += [p for p in pkgconfig.readdir() if p.basename.endswith(".pc")]
    return found

def parse_pkgconfig(text, pcfiledir):
    """Variables and fields of a pkg-config file, ${...} expanded.

    Args:
      text: the .pc file's content.
      pcfiledir: what ${pcfiledir} stands for (the file's directory).

    Returns:
      A dict: each variable (name=value) and each field (Name: value).
    """
    values = {"pcfiledir": pcfiledir}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        colon = line.find(":")
        equals = line.find("=")
        if equals > 0 and (colon < 0 or equals < colon):
            key, value = line[:equals].strip(), line[equals + 1:].strip()
        elif colon > 0:
            key, value = line[:colon].strip(), line[colon + 1:].strip()
        else:
            continue

        # Expand ${var} references (no nesting in practice: a bounded loop).
        for _ in range(10):
            start = value.find("${")
            if start < 0:
                break
            end = value.find("}", start)
            if end < 0:
                break
            value = value[:start] + values.get(value[start + 2:end], "") + value[end + 1:]
        values[key] = value
    return values

def _define(cflags, name):
    """The value of -D<name>=value in Cflags ("" when it is absent or empty)."""
    for flag in cflags.split(" "):
        if flag.startswith("-D%s=" % name):
            return flag[len("-D%s=" % name):]
    return ""

def _library(pc):
    """The shared library file Libs: names (an absolute path or -L/-l)."""
    libdir = pc.get("libdir", "")
    for flag in pc.get("Libs", "").split(" "):
        if flag.endswith(".so") or ".so." in flag:
            return flag
        if flag.startswith("-l"):
            return "%s/lib%s.so" % (libdir, flag[2:])
    return None

def _cpu_blas_impl(rctx):
    lock = rctx.path(rctx.attr.lock)
    result = rctx.execute(["sha256sum", str(lock)])
    if result.return_code != 0:
        fail("@%s: sha256sum %s failed: %s" % (rctx.name, lock, result.stderr))
    digest = result.stdout.strip().split(" ")[0]
    env = rctx.os.environ
    cache = env.get("TORCHSPLIT_BLAS_CACHE") or "%s/.cache/torchsplit/blas" % env.get("HOME", "")
    directory = "%s/%s" % (cache, digest)
    pins = _pins(rctx, lock)
    if len(pins) != 1:
        fail("@%s: %s must pin exactly one BLAS wheel, it pins %d" % (rctx.name, rctx.attr.lock, len(pins)))
    dist, version = pins[0]
    if not rctx.path(directory + "/.torchsplit-installed").exists:
        fail("@%s: the BLAS pinned by %s (%s %s) is not installed in %s: run tools/dev bootstrap" % (
            rctx.name,
            rctx.attr.lock,
            dist,
            version,
            directory,
        ))
    pcs = _pkgconfig_files(rctx, directory)
    if len(pcs) != 1:
        fail("@%s: expected one pkg-config file under %s/*/lib/pkgconfig, found %s" % (rctx.name, directory, [str(p) for p in pcs]))
    pc = parse_pkgconfig(rctx.read(pcs[0]), str(pcs[0].dirname))
    implementation = pc.get("Name", "").lower()
    if implementation not in _IMPLEMENTATIONS:
        fail("@%s: %s is a %r BLAS; tools/blas/blas.bzl knows %s" % (rctx.name, pcs[0], pc.get("Name"), sorted(_IMPLEMENTATIONS)))
    library = _library(pc)
    if library == None or not rctx.path(library).exists:
        fail("@%s: %s names no shared library that exists (Libs: %s)" % (rctx.name, pcs[0], pc.get("Libs")))
    soname = library.split("/")[-1]
    rctx.symlink(rctx.path(library).realpath, "lib/" + soname)

    cflags = pc.get("Cflags", "")
    prefix = _define(cflags, "BLAS_SYMBOL_PREFIX")
    suffix = _define(cflags, "BLAS_SYMBOL_SUFFIX")
    wide = "USE_64BITINT=1" in pc.get("openblas_config", "") or suffix.startswith("64")
    macros = {
        "CPU_BLAS_INT": "long" if wide else "int",
        "CPU_BLAS_NAME": "\"%s %s\"" % (dist, version),
        "CPU_BLAS_SYMBOL(name)": "%sname%s" % (prefix + "##" if prefix else "", "##" + suffix if suffix else ""),
    }
    for macro, symbol in _IMPLEMENTATIONS[implementation].items():
        macros[macro] = prefix + symbol + suffix
    header = [
        "#pragma once",
        "// Generated by @%s (tools/blas/blas.bzl) from %s's pkg-config file." % (rctx.name, dist),
        "// CPU_BLAS_SYMBOL(cblas_sgemm) is the library's name for cblas_sgemm.",
    ] + ["#define %s %s" % (m, macros[m]) for m in sorted(macros)]
    rctx.file("cpu_blas.h", "\n".join(header) + "\n")
    rctx.file("BUILD.bazel", """# Generated by @{name} (tools/blas/blas.bzl): {dist} {version} from {directory}.
package(default_visibility = {visibility})

cc_import(
    name = "blas_import",
    shared_library = "lib/{soname}",
)

cc_library(
    name = "blas",
    hdrs = ["cpu_blas.h"],
    includes = ["."],
    deps = [":blas_import"],
)

filegroup(
    name = "shared_library",
    srcs = ["lib/{soname}"],
)
""".format(name = rctx.name, dist = dist, version = version, directory = directory, visibility = repr(rctx.attr.blas_visibility), soname = soname))
    rctx.file("defs.bzl", "\"\"\"What @%s found.\"\"\"\n\nBLAS_DISTRIBUTION = %r\nBLAS_VERSION = %r\nBLAS_SONAME = %r\n" % (rctx.name, dist, version, soname))

cpu_blas = repository_rule(
    implementation = _cpu_blas_impl,
    environ = BLAS_ENVIRON,
    local = True,
    attrs = {
        "blas_visibility": attr.string_list(
            default = ["//visibility:public"],
            doc = "Who may depend on the BLAS.",
        ),
        "lock": attr.label(mandatory = True, allow_single_file = True, doc = "The pip lock pinning the BLAS wheel."),
    },
    doc = "Exposes the BLAS wheel pinned by `lock`, installed by tools/dev bootstrap, as a C++ library.",
)
