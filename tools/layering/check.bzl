"""layering_check: the Bazel-native transitive dependency check (layer 2).

In the spirit of TensorFlow's check_deps: an aspect walks the transitive
closure through deps, data, srcs and the like (whatever select() branch the
configuration takes) and collects every label some policy rule guards
(third_device/..., the CUDA toolkit repository). At a target on the "from"
side of a rule in tools/layering/policy.bzl it fails analysis with

    //core:X cannot depend on //third_device/torch_cuda:Y (policy rule ...);
    see bazel query 'somepath(//core:X, //third_device/torch_cuda:Y)'

.bazelrc attaches it to every build (`build --aspects=...`). It creates no
action and no output, so it costs one provider per configured target and
changes no action key.
"""

load(":rules.bzl", "breaks", "forbidden_rules", "is_guarded")

LayeringInfo = provider(
    doc = "What the layering check knows about a target's transitive closure.",
    fields = {
        "guarded": "depset of Labels in the closure (the target included) that a policy rule guards",
    },
)

# Attributes the check follows. A new rule kind whose dependencies sit in other
# attributes must be added here (tests/layering checks every rule kind in the
# repository against this list).
DEP_ATTRS = [
    "actual",
    "data",
    "deps",
    "exports",
    "hdrs",
    "implementation_deps",
    "runtime_deps",
    "srcs",
    "textual_hdrs",
]

def _targets(value):
    kind = type(value)
    if kind == "list":
        return [v for v in value if type(v) == "Target"]
    if kind == "Target":
        return [value]
    if kind == "dict":
        return [k for k in value.keys() if type(k) == "Target"] + [v for v in value.values() if type(v) == "Target"]
    return []

_MAX_ALSO = 5

def _foreign(label, owner):
    return label.workspace_name != owner.workspace_name or label.package != owner.package

def _label(label):
    text = str(label)
    return text[1:] if text.startswith("@//") else text

def _layering_check_impl(_target, ctx):
    direct = []
    if is_guarded(ctx.label.workspace_name, ctx.label.package):
        direct.append(ctx.label)
    transitive = []
    for name in DEP_ATTRS:
        for dep in _targets(getattr(ctx.rule.attr, name, None)):
            if LayeringInfo in dep:
                transitive.append(dep[LayeringInfo].guarded)
            elif _foreign(dep.label, ctx.label) and is_guarded(dep.label.workspace_name, dep.label.package):
                # A file (aspects visit rules only) of another package: a
                # target's own files add nothing its own label does not.
                direct.append(dep.label)
    guarded = depset(direct, transitive = transitive, order = "preorder")

    rules = forbidden_rules(ctx.label.workspace_name, ctx.label.package)
    if rules:
        found = []
        for label in guarded.to_list():
            rule = breaks(rules, label.workspace_name, label.package)
            if rule != None:
                found.append([label, rule])
        if found:
            me = _label(ctx.label)
            label, rule = found[0]
            lines = ["%s cannot depend on %s (layering policy rule %s: %s); see bazel query 'somepath(%s, %s)'" % (
                me,
                _label(label),
                rule["name"],
                rule["why"],
                me,
                _label(label),
            )]
            others = [[_label(o), r["name"]] for o, r in found[1:]]
            for other, rule_name in others[:_MAX_ALSO]:
                lines.append("  also: %s cannot depend on %s (rule %s)" % (me, other, rule_name))
            if len(others) > _MAX_ALSO:
                lines.append("  ... and %d more forbidden labels in its closure" % (len(others) - _MAX_ALSO))
            lines.append("  policy: tools/layering/policy.bzl; explain every path with: tools/torchsplit audit")
            fail("\n".join(lines))
    return [LayeringInfo(guarded = guarded)]

layering_check = aspect(
    implementation = _layering_check_impl,
    attr_aspects = DEP_ATTRS,
    doc = "Fails the build when a target depends on what tools/layering/policy.bzl forbids.",
)
