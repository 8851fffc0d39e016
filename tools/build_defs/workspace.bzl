"""workspace_manifest: the checkout's files as a test's data, and where each one goes.

A test that runs Bazel itself (tests/suites.bzl, workspace_test) needs a copy of
the workspace. Its files come in as declared data, so the test's result is
cached on exactly them; the manifest says, for each, where it is in the runfiles
and where it belongs in the copy (an offline rule repository's files are in its
own runfiles directory, and belong under tools/repos/<name>/). With graph_only,
a test that only loads and queries the graph is cached on the Starlark and the
file names, not on every source file's content.
"""

# In a "graph" copy, what Bazel reads to load and query the graph keeps its content:
# Starlark, the Bazel settings, the launcher, lock files (repository rules read
# them), the offline rule repositories, and the launchers and torchsplit tools
# that query it.
_GRAPH_NAMES = ["BUILD", "BUILD.bazel", "WORKSPACE", "MODULE.bazel", "bazel"]
_GRAPH_SUFFIXES = [".bzl", ".txt", ".bazelrc", ".bazelversion", ".bazelignore", ".bazeliskrc"]
_GRAPH_DIRS = ["tools/python/", "tools/bazel", "tools/dev", "tools/torchsplit"]

def _keeps_content(f, path):
    if f.owner.workspace_name:
        return True  # an offline rule repository
    name = path.rsplit("/", 1)[-1]
    if name in _GRAPH_NAMES or [d for d in _GRAPH_DIRS if path.startswith(d)]:
        return True
    return len([s for s in _GRAPH_SUFFIXES if name.endswith(s)]) > 0

def _checkout_paths(ctx, f):
    """(runfiles path, path in the checkout) of a source file."""
    if not f.is_source:
        fail("%s is not a source file: a workspace copy holds sources only" % f.short_path)
    repo = f.owner.workspace_name
    if repo:
        inside = f.short_path[len("../%s/" % repo):]
        return "%s/%s" % (repo, inside), "tools/repos/%s/%s" % (repo, inside)
    return "%s/%s" % (ctx.workspace_name, f.short_path), f.short_path

def _workspace_manifest_impl(ctx):
    files = depset(transitive = [src[DefaultInfo].files for src in ctx.attr.srcs]).to_list()
    lines = []
    kept = []
    have = {}
    for f in files:
        have[_checkout_paths(ctx, f)[1]] = True

    # Names only: the copy holds an empty file, so a label naming it still resolves,
    # and the test's key has the name, not the content.
    for src in ctx.attr.names_only:
        for f in src[DefaultInfo].files.to_list():
            path = _checkout_paths(ctx, f)[1]
            if path not in have:
                have[path] = True
                lines.append("-\t" + path)
    for f in files:
        source, path = _checkout_paths(ctx, f)
        if ctx.attr.graph_only and not _keeps_content(f, path):
            # Its name only: the copy holds an empty file, and the test's key omits its content.
            lines.append("-\t" + path)
        else:
            lines.append(source + "\t" + path)
            kept.append(f)
    out = ctx.actions.declare_file(ctx.label.name + ".manifest")
    ctx.actions.write(out, "\n".join(sorted(lines)) + "\n")
    return [DefaultInfo(
        files = depset([out]),
        runfiles = ctx.runfiles(files = [out] + kept),
    )]

workspace_manifest = rule(
    implementation = _workspace_manifest_impl,
    attrs = {
        "graph_only": attr.bool(
            doc = "Whether only what loading and querying the graph reads keeps its content " +
                  "(every other file is an empty stand-in): for tests that query the graph.",
        ),
        "names_only": attr.label_list(
            allow_files = True,
            doc = "Files the copy holds empty (names only) unless srcs has them.",
        ),
        "srcs": attr.label_list(allow_files = True, doc = "Filegroups of source files."),
    },
    doc = "Writes <name>.manifest (runfiles path TAB checkout path per file); its runfiles are the files.",
)

def package_files(name = "all_files", visibility = ["//:__pkg__"]):
    """Every file of the calling package, for //:all_files (what workspace tests copy).

    A glob in the root package cannot reach into another package, so each package
    declares its own files and the root names each package's target.

    Args:
      name: the filegroup's name; //:all_files expects "all_files".
      visibility: who may depend on it (the root package, by default).
    """
    native.filegroup(
        name = name,
        srcs = native.glob(
            ["**"],
            exclude = [
                "**/__pycache__/**",
                "**/*.pyc",
            ],
        ),
        visibility = visibility,
    )
