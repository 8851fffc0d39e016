"""torchsplit_wheel: a Python wheel (PEP 427) of one package, assembled by Bazel.

One wheel per distribution, the way JAX ships jaxlib and its CUDA plugins:
torch_core (no CUDA), and one wheel per backend that requires torch_core at
the same version, declares the `torch_core.backends` entry point and finds
libtorch_core.so (and NVIDIA's wheels) through $ORIGIN-relative RUNPATHs.
Build the release (optimised, stripped) wheels with
`bazelisk build --config=release //:wheels`, or `tools/dev wheels` (to dist/).
"""

load("@local_config_python//:python_tag.bzl", "PYTHON_TAG")

# The distributions' version (pyproject.toml's project version).
VERSION = "0.1.0"

# The platform tag `auditwheel show` confirms for every wheel (tests/install).
PLATFORM_TAG = "manylinux_2_35_x86_64"

# Where installed packages find each other, relative to a package directory
# in site-packages ($ORIGIN is the extension's directory).
TORCH_CORE_LIB = "$ORIGIN/../torch_core/lib"

# The entry point group torch_core imports its backends from (core/torch_core/_backends.py).
BACKENDS_GROUP = "torch_core.backends"

def backend_entry_point(backend):
    """The backend's entry point, "emu = torch_emu": its wheel's and its development build's.

    The name is the package without "torch_" (a package without the prefix
    keeps its name), as docs/adding-a-backend.md shows it.
    """
    short = backend[len("torch_"):] if backend.startswith("torch_") else backend
    return "%s = %s" % (short, backend)

def _dev_dist_info_impl(ctx):
    prefix = "%s-%s.dist-info/" % (ctx.attr.distribution, ctx.attr.version)
    metadata = ctx.actions.declare_file(prefix + "METADATA")
    entry_points = ctx.actions.declare_file(prefix + "entry_points.txt")
    ctx.actions.write(metadata, "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (ctx.attr.distribution, ctx.attr.version))
    ctx.actions.write(entry_points, "[%s]\n%s\n" % (BACKENDS_GROUP, ctx.attr.entry_point))
    return [DefaultInfo(files = depset([metadata, entry_points]))]

_dev_dist_info = rule(
    implementation = _dev_dist_info_impl,
    attrs = {
        "distribution": attr.string(mandatory = True),
        "entry_point": attr.string(mandatory = True),
        "version": attr.string(mandatory = True),
    },
    doc = "A development build's <distribution>-<version>.dist-info: METADATA and entry_points.txt.",
)

def backend_dev_dist_info(name, backend, **kwargs):
    """The metadata that makes a development build of `backend` autoload.

    `import torch_core` imports the backends that declare a
    `torch_core.backends` entry point, which importlib.metadata finds in the
    `*.dist-info` directories on sys.path. An installed wheel has one; this
    target puts the same one in bazel-bin/third_device/<backend>/, so a
    source tree with that directory on sys.path (README.md's PYTHONPATH,
    tests/conftest.py, a py_test's runfiles) autoloads the backend as an
    installed one does, the way an editable install's metadata does. No
    wheel contains it.

    Args:
      name: target name.
      backend: the backend's name and package, e.g. "torch_emu".
      **kwargs: common attributes (target_compatible_with, visibility).
    """
    _dev_dist_info(
        name = name,
        distribution = backend,
        entry_point = backend_entry_point(backend),
        version = VERSION,
        **kwargs
    )

def _wheel_impl(ctx):
    name = "%s-%s-%s-%s-%s.whl" % (ctx.attr.distribution, ctx.attr.version, PYTHON_TAG, PYTHON_TAG, ctx.attr.platform)
    out = ctx.actions.declare_file(name)
    args = ctx.actions.args()
    args.add("--output", out)
    args.add("--distribution", ctx.attr.distribution)
    args.add("--version", ctx.attr.version)
    args.add("--tag", "%s-%s-%s" % (PYTHON_TAG, PYTHON_TAG, ctx.attr.platform))
    args.add("--summary", ctx.attr.summary)
    inputs = list(ctx.files.srcs)
    if ctx.attr.pinned_requires:
        if not ctx.file.pins:
            fail("pinned_requires needs pins, the lock file that pins them")
        args.add("--pins", ctx.file.pins)
        inputs.append(ctx.file.pins)
    for f in ctx.files.srcs:
        if not f.short_path.startswith(ctx.attr.strip_prefix):
            fail("%s is not under strip_prefix %s" % (f.short_path, ctx.attr.strip_prefix))
        args.add("--file", "%s=%s" % (f.short_path[len(ctx.attr.strip_prefix):], f.path))
    for target, dest in ctx.attr.files.items():
        files = target.files.to_list()
        if len(files) != 1:
            fail("%s: files maps one file to %s, got %d" % (target.label, dest, len(files)))
        args.add("--file", "%s=%s" % (dest, files[0].path))
        inputs.append(files[0])
    for dest, runpath in ctx.attr.runpaths.items():
        args.add("--runpath", "%s=%s" % (dest, runpath))
    args.add_all(ctx.attr.requires, before_each = "--requires")
    args.add_all(ctx.attr.pinned_requires, before_each = "--pinned-requires")
    for group, entries in ctx.attr.entry_points.items():
        for entry in entries:
            args.add("--entry-point", "%s:%s" % (group, entry))
    ctx.actions.run(
        executable = ctx.executable._builder,
        arguments = [args],
        inputs = inputs,
        outputs = [out],
        mnemonic = "PyWheel",
        progress_message = "Assembling wheel %s" % name,
    )
    return [DefaultInfo(files = depset([out]))]

_wheel = rule(
    implementation = _wheel_impl,
    attrs = {
        "distribution": attr.string(mandatory = True),
        "entry_points": attr.string_list_dict(doc = "group -> ['name = module', ...]"),
        "files": attr.label_keyed_string_dict(allow_files = True, doc = "built file -> path in the wheel"),
        "pinned_requires": attr.string_list(doc = "distributions required at the version `pins` pins"),
        # Only a wheel with pinned requirements names a lock file: core's wheel
        # must not depend on a toolkit's lock (tests/bazel/test_foundation.py).
        "pins": attr.label(allow_single_file = True, doc = "lock file (name==version lines) for pinned_requires"),
        "platform": attr.string(mandatory = True),
        "requires": attr.string_list(doc = "Requires-Dist lines as written"),
        "runpaths": attr.string_dict(doc = "path in the wheel -> RUNPATH it gets (replaces Bazel's)"),
        "srcs": attr.label_list(allow_files = [".py"]),
        "strip_prefix": attr.string(mandatory = True),
        "summary": attr.string(mandatory = True),
        "version": attr.string(mandatory = True),
        "_builder": attr.label(default = "//tools/build_defs:wheel_builder", executable = True, cfg = "exec"),
    },
    doc = "Assembles a wheel with a valid RECORD (tools/build_defs/wheel_builder.py).",
)

def torchsplit_wheel(
        name,
        distribution,
        srcs,
        summary,
        files = {},
        runpaths = {},
        requires = [],
        pinned_requires = [],
        pins = None,
        entry_points = {},
        **kwargs):
    """The wheel of one distribution of this package.

    Args:
      name: target name (conventionally "wheel").
      distribution: the distribution and its top-level package, e.g. "torch_emu".
      srcs: the package's Python sources, placed by their path in the package.
      summary: one-line description (Summary:).
      files: built file (extension, shared library, header) -> path in the wheel.
      runpaths: path in the wheel -> $ORIGIN-relative RUNPATH.
      requires: Requires-Dist lines.
      pinned_requires: distributions required at the version `pins` pins.
      pins: the lock file pinning pinned_requires (only then needed).
      entry_points: group -> ["name = module", ...].
      **kwargs: common attributes (target_compatible_with, visibility, tags).
    """
    _wheel(
        name = name,
        distribution = distribution,
        version = VERSION,
        platform = PLATFORM_TAG,
        srcs = srcs,
        strip_prefix = native.package_name() + "/",
        summary = summary,
        files = files,
        runpaths = runpaths,
        requires = requires,
        pinned_requires = pinned_requires,
        pins = pins,
        entry_points = entry_points,
        **kwargs
    )

def backend_wheel(name, backend, extension, summary, runpaths = [], pinned_requires = [], pins = None, extra_srcs = [], **kwargs):
    """The wheel of a device backend (third_device/<backend>, see backend.bzl).

    It requires torch_core at the same version, declares its
    `torch_core.backends` entry point (torch_core imports it at start-up)
    and finds libtorch_core.so in the installed torch_core.

    Args:
      name: target name (conventionally "wheel").
      backend: the backend's name and package, e.g. "torch_emu".
      extension: the extension module, e.g. "_EMUC".
      summary: one-line description.
      runpaths: further $ORIGIN-relative RUNPATH entries (e.g. NVIDIA's wheels).
      pinned_requires: distributions required at the version `pins` pins.
      pins: the lock file pinning pinned_requires (only then needed).
      extra_srcs: generated Python modules of the package (a derived
        backend's translated ones), besides its source files.
      **kwargs: common attributes (target_compatible_with, visibility, tags).
    """
    ext = "%s/%s.so" % (backend, extension)
    torchsplit_wheel(
        name = name,
        distribution = backend,
        srcs = native.glob(["%s/**/*.py" % backend]) + extra_srcs,
        summary = summary,
        files = {":" + ext: ext},
        runpaths = {ext: ":".join([TORCH_CORE_LIB] + runpaths)},
        requires = ["torch_core==" + VERSION],
        pinned_requires = pinned_requires,
        pins = pins,
        entry_points = {BACKENDS_GROUP: [backend_entry_point(backend)]},
        # A wheel is a leaf: only //:wheels collects it (the layering policy
        # forbids core and other backends to see a backend's targets).
        visibility = ["//:__pkg__"],
        **kwargs
    )
