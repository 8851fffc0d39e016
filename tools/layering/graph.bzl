"""Graph tests: the layering policy over the *unconfigured* graph, inside `bazel test`.

The aspect (check.bzl) sees one configuration: a forbidden edge in an inactive
select() branch, or a select() keyed on a toolkit's config_setting, passes it.
A genquery sees every branch and every select() key. Each guarded package gets

  :layering_graph_test_deps    genquery: the forbidden labels its targets reach
  :layering_graph_test_public  genquery (backends): its public targets
  :layering_graph_test         fails, listing them, unless both sets are empty

core/BUILD.bazel calls layer_graph_test() at its end; device_backend()
(tools/build_defs/backend.bzl) calls it for every backend. The regular
expressions are built from tools/layering/policy.bzl (REPOSITORIES) here.
"""

load(":policy.bzl", "DERIVED_BACKENDS", "REPOSITORIES")

def _alternatives(names):
    return "|".join([n.replace(".", "\\\\.") for n in names])

def forbidden_regex(layer, backend = None):
    """Java regular expression over query labels a layer's targets may not reach.

    Args:
      layer: "core" or "backend" (a LAYERS name with a REPOSITORIES entry).
      backend: for layer "backend", the backend's own directory name.

    Returns:
      The regex: any backend (core) or any other backend (a backend), and
      every external repository not in the layer's REPOSITORIES.
    """
    repos = "^@(?!(%s)//)" % _alternatives(REPOSITORIES[layer])
    if layer == "core":
        return "^//third_device/|" + repos
    return "^//third_device/(?!%s[/:])|%s" % (backend, repos)

def _empty_test_impl(ctx):
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    found = " ".join(["'%s'" % f.short_path for f in ctx.files.found])
    ctx.actions.write(
        output = script,
        is_executable = True,
        content = """#!/bin/sh
if [ -n "$(cat {found})" ]; then
  echo "layering policy ({layer}): //{package} reaches these forbidden labels (in some select() branch) or declares them public:" >&2
  cat {found} | head -n 20 | sed 's/^/  /' >&2
  echo "policy: tools/layering/policy.bzl; explain with: tools/torchsplit audit" >&2
  exit 1
fi
echo "layering policy ({layer}): nothing forbidden in the unconfigured graph of //{package}"
""".format(found = found, layer = ctx.attr.layer, package = ctx.label.package),
    )
    return [DefaultInfo(executable = script, runfiles = ctx.runfiles(files = ctx.files.found))]

_empty_test = rule(
    implementation = _empty_test_impl,
    test = True,
    attrs = {
        "found": attr.label_list(allow_files = True, mandatory = True),
        "layer": attr.string(mandatory = True),
    },
    doc = "Passes when every file of `found` (genquery outputs) is empty.",
)

def layer_graph_test(name, layer, backend = None, exclude = []):
    """Adds the graph test `name` and its genqueries over the package's targets so far.

    Call it last in the BUILD file (targets declared after it are not in scope).
    For a backend it also adds <name>_public, a genquery of the package's
    public targets (config_settings aside), which fails the test too. Targets
    declared after the call are checked by `torchsplit audit` only.

    Args:
      name: the test's name ("layering_graph_test"); the genqueries are
        <name>_deps and, for a backend, <name>_public.
      layer: the package's layer ("core" or "backend").
      backend: the backend's name, for layer "backend".
      exclude: rule names to leave out of the scope.
    """
    names = [
        n
        for n, r in native.existing_rules().items()
        if n not in exclude and not n.startswith(name) and r["kind"] != "config_setting"
    ]
    scope = [":" + n for n in sorted(names)]
    targets = "set(%s)" % " ".join(["//%s:%s" % (native.package_name(), n) for n in sorted(names)])
    expression = "filter('%s', deps(%s))" % (forbidden_regex(layer, backend), targets)
    derived = DERIVED_BACKENDS.get(backend) if layer == "backend" else None
    if derived:
        # What the policy allows a derived backend: its translation rules'
        # direct edges to the parent's source files. Reaching anything else of
        # the parent (a target, a generated file) is still found.
        via = "kind('^(%s) rule$', %s)" % ("|".join(derived["via"]), targets)
        parent = "filter('^//third_device/%s:', deps(%s, 1))" % (derived["from"], via)
        expression = "%s - kind('source file', %s)" % (expression, parent)
    native.genquery(
        name = name + "_deps",
        expression = expression,
        scope = scope,
        testonly = True,
    )
    found = [":%s_deps" % name]
    if layer == "backend":
        native.genquery(
            name = name + "_public",
            expression = "attr(visibility, '//visibility:public', %s)" % targets,
            scope = scope,
            testonly = True,
        )
        found.append(":%s_public" % name)
    _empty_test(
        name = name,
        found = found,
        layer = layer,
        size = "small",
    )
