"""layering_check: the Bazel-native transitive dependency check (layer 2).

In the spirit of TensorFlow's check_deps: an aspect walks the transitive
closure through *every* label attribute of every rule -- deps, data, srcs,
tools, toolchains and the implicit (private) attributes alike, whatever
select() branch the configuration takes -- and collects

  * every label some FORBIDDEN rule of tools/layering/policy.bzl guards
    (third_device/..., the CUDA toolkit repository), and
  * every edge that enters another repository.

At a target on the "from" side of a rule it fails analysis with

    //core:X cannot depend on //third_device/torch_cuda:Y (policy rule ...);
    see bazel query 'somepath(//core:X, //third_device/torch_cuda:Y)'

and at a target of a layer with a repository allowlist (REPOSITORIES: core
may reach only the C++/Python toolchains and pybind11) it fails on any other
repository. tests/layering/test_aspect.py checks that no rule kind in the
repository has a label attribute the aspect does not follow.

.bazelrc attaches it to every build (`build --aspects=...`). It creates no
action and no output, so it costs one provider per configured target and
changes no action key.
"""

load(":rules.bzl", "allowed_repositories", "breaks", "derived_parent", "forbidden_rules", "is_guarded")

LayeringInfo = provider(
    doc = "What the layering check knows about a target's transitive closure.",
    fields = {
        "external": "depset of Labels in another repository than the target depending on them (repository crossings)",
        "guarded": "depset of Labels in the closure (the target included) that a policy rule guards",
    },
)

def _targets(value):
    kind = type(value)
    if kind == "list":
        return [v for v in value if type(v) == "Target"]
    if kind == "Target":
        return [value]
    if kind == "dict":
        return [k for k in value.keys() if type(k) == "Target"] + [v for v in value.values() if type(v) == "Target"]
    return []

def rule_deps(ctx):
    """Every Target in every attribute of the rule the aspect visits (implicit ones included).

    Args:
      ctx: the aspect's context.

    Returns:
      list of [attribute name, Target].
    """
    out = []
    for name in dir(ctx.rule.attr):
        if name in ("to_json", "to_proto"):
            continue
        for dep in _targets(getattr(ctx.rule.attr, name, None)):
            out.append([name, dep])
    return out

_MAX_ALSO = 5

def _foreign(label, owner):
    return label.workspace_name != owner.workspace_name or label.package != owner.package

def _label(label):
    text = str(label)
    return text[1:] if text.startswith("@//") else text

def _fail(me, found):
    label, rule_name, why = found[0]
    lines = ["%s cannot depend on %s (layering policy rule %s: %s); see bazel query 'somepath(%s, %s)'" % (
        me,
        _label(label),
        rule_name,
        why,
        me,
        _label(label),
    )]
    others = found[1:]
    for other, other_rule, _ in others[:_MAX_ALSO]:
        lines.append("  also: %s cannot depend on %s (rule %s)" % (me, _label(other), other_rule))
    if len(others) > _MAX_ALSO:
        lines.append("  ... and %d more forbidden labels in its closure" % (len(others) - _MAX_ALSO))
    lines.append("  policy: tools/layering/policy.bzl; explain every path with: tools/torchsplit audit")
    fail("\n".join(lines))

def _is_parent_source(name, dep, parent):
    """A source file of the parent package, named in a translation rule's srcs (DERIVED_BACKENDS)."""
    if parent == None or name != "srcs" or dep.label.workspace_name or dep.label.package != parent:
        return False
    files = dep.files.to_list()
    return len(files) == 1 and files[0].is_source

def _layering_check_impl(_target, ctx):
    parent = derived_parent(ctx.label.workspace_name, ctx.label.package, ctx.rule.kind)
    direct = []
    if is_guarded(ctx.label.workspace_name, ctx.label.package):
        direct.append(ctx.label)
    crossings = []
    transitive = []
    transitive_external = []
    for name, dep in rule_deps(ctx):
        if _is_parent_source(name, dep, parent):
            continue  # what a derived backend's translation rule may read
        if dep.label.workspace_name != ctx.label.workspace_name:
            crossings.append(dep.label)
        if LayeringInfo in dep:
            transitive.append(dep[LayeringInfo].guarded)
            transitive_external.append(dep[LayeringInfo].external)
        elif _foreign(dep.label, ctx.label) and is_guarded(dep.label.workspace_name, dep.label.package):
            # A file (aspects visit rules only) of another package: a
            # target's own files add nothing its own label does not.
            direct.append(dep.label)
    guarded = depset(direct, transitive = transitive, order = "preorder")
    external = depset(crossings, transitive = transitive_external)

    found = []
    rules = forbidden_rules(ctx.label.workspace_name, ctx.label.package)
    if rules:
        for label in guarded.to_list():
            rule = breaks(rules, label.workspace_name, label.package)
            if rule != None:
                found.append([label, rule["name"], rule["why"]])
    allowed = allowed_repositories(ctx.label.workspace_name, ctx.label.package)
    if allowed != None:
        seen = {}
        for label in external.to_list():
            repo = label.workspace_name
            if repo and repo not in allowed and repo not in seen and label not in [f[0] for f in found]:
                seen[repo] = True
                found.append([label, "repositories", "@%s is not among the repositories this layer may reach (REPOSITORIES)" % repo])
    if found:
        _fail(_label(ctx.label), found)
    return [LayeringInfo(guarded = guarded, external = external)]

layering_check = aspect(
    implementation = _layering_check_impl,
    attr_aspects = ["*"],
    doc = "Fails the build when a target depends on what tools/layering/policy.bzl forbids.",
)
