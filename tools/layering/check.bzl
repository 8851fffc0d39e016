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
may reach only the C++/Python toolchains and pybind11; a backend also its own
toolkit, TOOLKITS) it fails on any other repository. At a core target it also
fails on a device source (.cu, .cuh...: DEVICE_SOURCE_SUFFIXES) in srcs, hdrs
or textual_hdrs, and on an effective link flag asking for a library outside
CORE_NEEDED -- the flags the link receives, from the target's own linkopts and
every dependency's CcInfo, whoever computed them (a neutral //tools macro).
A derived backend's translation rule may read its parent's source files
(DERIVED_BACKENDS); no other edge to the parent is allowed.
tests/layering/test_aspect.py checks that no rule kind in the repository has
a label attribute the aspect does not follow.

.bazelrc attaches it to every build (`build --aspects=...`). It creates no
action and no output, so it costs one provider per configured target and
changes no action key.
"""

load(
    ":rules.bzl",
    "allowed_repositories",
    "breaks",
    "core_may_link",
    "device_source",
    "forbidden_rules",
    "is_guarded",
    "is_translation_read",
    "layer_of",
)

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

# Rules whose findings are about the target's own sources or flags, not an edge.
_OWN_RULES = ("core-device-source", "CORE_NEEDED")

def _render(me, label, rule_name, why):
    if rule_name in _OWN_RULES:
        return "%s: %s (layering policy rule %s)" % (me, why, rule_name)
    return "%s cannot depend on %s (layering policy rule %s: %s); see bazel query 'somepath(%s, %s)'" % (
        me,
        _label(label),
        rule_name,
        why,
        me,
        _label(label),
    )

def _fail(me, found):
    label, rule_name, why = found[0]
    lines = [_render(me, label, rule_name, why)]
    others = found[1:]
    for other, other_rule, other_why in others[:_MAX_ALSO]:
        if other_rule in _OWN_RULES:
            lines.append("  also: %s" % _render(me, other, other_rule, other_why))
        else:
            lines.append("  also: %s cannot depend on %s (rule %s)" % (me, _label(other), other_rule))
    if len(others) > _MAX_ALSO:
        lines.append("  ... and %d more forbidden labels in its closure" % (len(others) - _MAX_ALSO))
    lines.append("  policy: tools/layering/policy.bzl; explain every path with: tools/torchsplit audit")
    fail("\n".join(lines))

def _is_source_file(dep):
    files = dep.files.to_list()
    return len(files) == 1 and files[0].is_source and files[0].owner == dep.label

# A core target's attributes whose files it compiles (or exports to be compiled).
_SOURCE_ATTRS = ("srcs", "hdrs", "textual_hdrs")

def _core_findings(ctx):
    """Device sources and effective link flags of a core target (see the file docstring)."""
    found = []
    for attr in _SOURCE_ATTRS:
        for f in getattr(ctx.rule.files, attr, []):
            suffix = device_source(f.basename)
            if suffix:
                found.append([
                    f.owner,
                    "core-device-source",
                    "it lists %s in %s: a device source (%s, DEVICE_SOURCE_SUFFIXES); core compiles for the CPU only, the file belongs to a backend" % (f.short_path, attr, suffix),
                ])
    flags = {}
    own = getattr(ctx.rule.attr, "linkopts", None)
    if type(own) == "list":
        for flag in own:
            flags[flag] = ctx.label
    for dep in getattr(ctx.rule.attr, "deps", None) or []:
        if type(dep) != "Target" or CcInfo not in dep:
            continue
        for linker_input in dep[CcInfo].linking_context.linker_inputs.to_list():
            for flag in linker_input.user_link_flags:
                if flag not in flags:
                    flags[flag] = getattr(linker_input, "owner", dep.label)
    for flag, owner in flags.items():
        library = core_may_link(flag)
        if library:
            found.append([
                owner,
                "CORE_NEEDED",
                "its link receives %s (from the linkopts of %s): %s is not among the libraries core may link (CORE_NEEDED)" % (flag, _label(owner), library),
            ])
    return found

def _layering_check_impl(_target, ctx):
    direct = []
    if is_guarded(ctx.label.workspace_name, ctx.label.package):
        direct.append(ctx.label)
    crossings = []
    transitive = []
    transitive_external = []
    for attribute, dep in rule_deps(ctx):
        if dep.label.workspace_name != ctx.label.workspace_name:
            crossings.append(dep.label)
        if LayeringInfo in dep:
            transitive.append(dep[LayeringInfo].guarded)
            transitive_external.append(dep[LayeringInfo].external)
        elif _foreign(dep.label, ctx.label) and is_guarded(dep.label.workspace_name, dep.label.package):
            # A file (aspects visit rules only) of another package: a
            # target's own files add nothing its own label does not. A
            # derived backend's translation rule reading its parent's
            # source through its srcs is the one allowed file edge
            # (DERIVED_BACKENDS): not its data, not any other attribute.
            if attribute != "srcs" or not is_translation_read(
                ctx.label.workspace_name,
                ctx.label.package,
                ctx.rule.kind,
                dep.label.workspace_name,
                dep.label.package,
                _is_source_file(dep),
            ):
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
                found.append([label, "repositories", "@%s is not among the repositories this layer may reach (REPOSITORIES, TOOLKITS)" % repo])
    if not ctx.label.workspace_name and layer_of("", ctx.label.package) == "core" and allowed != None:
        found += _core_findings(ctx)
    if found:
        _fail(_label(ctx.label), found)
    return [LayeringInfo(guarded = guarded, external = external)]

layering_check = aspect(
    implementation = _layering_check_impl,
    attr_aspects = ["*"],
    doc = "Fails the build when a target depends on what tools/layering/policy.bzl forbids.",
)
