"""Reading tools/layering/policy.bzl: pattern matching and visibility lists.

Pure Starlark on strings (no Bazel builtins), so that the Python audit's
matcher is checked against this one (tests/layering/test_policy.py).
"""

load(
    ":policy.bzl",
    "BACKEND_VISIBILITY",
    "CORE_NEEDED",
    "DERIVED_BACKENDS",
    "DEVICE_SOURCE_SUFFIXES",
    "EXEMPT",
    "FORBIDDEN",
    "LAYERS",
    "REPOSITORIES",
    "TOOLKITS",
)

def parse_pattern(pattern):
    """Splits "//a/{b}/..." or "@repo//a/..." into its parts.

    Args:
      pattern: a package pattern from the policy.

    Returns:
      struct-like dict: repo ("" for the main repository), parts (path
      components, placeholders kept as "{name}"), recursive (ends with "...").
    """
    repo = ""
    rest = pattern
    if rest.startswith("@"):
        repo, _, rest = rest[1:].partition("//")
    elif rest.startswith("//"):
        rest = rest[2:]
    else:
        fail("layering policy: pattern %r must start with // or @repo//" % pattern)
    recursive = rest == "..." or rest.endswith("/...")
    if recursive:
        rest = rest[:-len("...")].rstrip("/")
    return {
        "parts": rest.split("/") if rest else [],
        "recursive": recursive,
        "repo": repo,
    }

def match_package(pattern, repo, package, bindings = {}):
    """Whether package `package` of repository `repo` matches `pattern`.

    Args:
      pattern: a package pattern from the policy.
      repo: the repository name ("" for the main one).
      package: the package path, e.g. "third_device/torch_cuda".
      bindings: placeholder values bound so far (by the rule's other side).

    Returns:
      The bindings extended with this pattern's placeholders, or None when it
      does not match. A placeholder already bound must have the same value; a
      new one must differ from every value already bound.
    """
    p = parse_pattern(pattern)
    if p["repo"] != repo:
        return None
    got = package.split("/") if package else []
    if len(got) < len(p["parts"]) or (not p["recursive"] and len(got) != len(p["parts"])):
        return None
    out = dict(bindings)
    for want, have in zip(p["parts"], got):
        if want.startswith("{") and want.endswith("}"):
            name = want[1:-1]
            if name in out:
                if out[name] != have:
                    return None
            elif have in out.values():
                return None
            else:
                out[name] = have
        elif want != have:
            return None
    return out

def is_exempt(repo, package):
    """Whether the policy exempts this package from every rule.

    Args:
      repo: the repository name ("" for the main one).
      package: the package path.

    Returns:
      True for packages matching an EXEMPT pattern.
    """
    for pattern in EXEMPT:
        if match_package(pattern, repo, package) != None:
            return True
    return False

def layer_of(repo, package):
    """The policy layer a package belongs to.

    Args:
      repo: the repository name ("" for the main one).
      package: the package path.

    Returns:
      The LAYERS name of the first matching pattern, "" when none matches.
    """
    for name, pattern in LAYERS:
        if match_package(pattern, repo, package) != None:
            return name
    return ""

def is_guarded(repo, package):
    """Whether some rule forbids some package from depending on this one.

    Args:
      repo: the repository name ("" for the main one).
      package: the package path.

    Returns:
      True when the package matches the "to" side of a FORBIDDEN rule.
    """
    for rule in FORBIDDEN:
        if match_package(rule["to"], repo, package) != None:
            return True
    return False

def forbidden_rules(repo, package):
    """The rules whose "from" side `package` is on, with the bindings it gives.

    Args:
      repo: the repository name ("" for the main one).
      package: the package path.

    Returns:
      list of [rule, bindings]; empty for exempt packages.
    """
    if is_exempt(repo, package):
        return []
    out = []
    for rule in FORBIDDEN:
        bindings = match_package(rule["from"], repo, package)
        if bindings != None:
            out.append([rule, bindings])
    return out

def breaks(rules, repo, package):
    """The first of `rules` that forbids depending on this package.

    Args:
      rules: what forbidden_rules returned for the depending package.
      repo: the repository name ("" for the main one) of the dependency.
      package: the package path of the dependency.

    Returns:
      The FORBIDDEN rule (a dict), or None when the dependency is allowed.
    """
    for rule, bindings in rules:
        if match_package(rule["to"], repo, package, bindings) != None:
            return rule
    return None

def visibility_of(pattern, **bindings):
    """A policy pattern as a visibility label, placeholders filled in.

    Args:
      pattern: a package pattern from the policy.
      **bindings: placeholder values, e.g. backend = "torch_cuda".

    Returns:
      "//a/b:__subpackages__" for "//a/b/...", "//a/b:__pkg__" for "//a/b".
    """
    for name, value in bindings.items():
        pattern = pattern.replace("{%s}" % name, value)
    if "{" in pattern:
        fail("layering policy: unbound placeholder in %r (have %s)" % (pattern, bindings))
    if pattern.endswith("//..."):
        return pattern[:-len("...")] + ":__subpackages__"
    if pattern.endswith("/..."):
        return pattern[:-len("/...")] + ":__subpackages__"
    return pattern + ":__pkg__"

def backend_visibility(backend):
    """Visibility of every standard target of third_device/<backend> (layer 1).

    Args:
      backend: the backend's directory name under third_device/.

    Returns:
      The visibility list, from BACKEND_VISIBILITY.
    """
    return [visibility_of(p, backend = backend) for p in BACKEND_VISIBILITY]

def backend_of(repo, package):
    """The backend (directory under third_device/) a package belongs to.

    Args:
      repo: the repository name ("" for the main one).
      package: the package path.

    Returns:
      The backend's directory name, or None outside third_device/<backend>/.
    """
    if repo or layer_of(repo, package) != "backend":
        return None
    return package.split("/")[1]

def allowed_repositories(repo, package):
    """The external repositories a package may reach (policy REPOSITORIES and TOOLKITS).

    Args:
      repo: the repository name ("" for the main one).
      package: the package path.

    Returns:
      The list of repository names of the package's layer (for a backend, plus
      its own toolkit's), or None when no allowlist applies (exempt packages,
      layers without one, other repositories).
    """
    if repo or is_exempt(repo, package):
        return None
    layer = layer_of(repo, package)
    allowed = REPOSITORIES.get(layer)
    if allowed == None or layer != "backend":
        return allowed
    return allowed + toolkit_repositories(backend_of(repo, package))

def toolkit_repositories(backend):
    """The external repositories of a backend's own toolkit (policy TOOLKITS).

    Args:
      backend: the backend's directory name under third_device/.

    Returns:
      The repository names; empty for a backend without a toolkit.
    """
    return TOOLKITS.get(backend, {}).get("repositories", [])

def toolkit_visibility(repository):
    """Visibility of a toolkit repository's targets: the backends it belongs to.

    WORKSPACE loads it and passes it to the repository rules
    (rules_cuda_dependencies, cuda_wheels, rules_hip_dependencies), so
    visibility (layer 1) enforces TOOLKITS too, read from the policy itself.

    Args:
      repository: the toolkit repository's name, e.g. "local_cuda".

    Returns:
      A list of "@//third_device/<backend>:__subpackages__" labels.
    """
    return [
        "@//third_device/%s:__subpackages__" % backend
        for backend in sorted(TOOLKITS)
        if repository in TOOLKITS[backend].get("repositories", [])
    ]

def derived_from(backend):
    """The parent of a derived backend and its translation rule kinds (DERIVED_BACKENDS).

    Args:
      backend: a backend's directory name under third_device/.

    Returns:
      [parent, [rule kinds]], or None for a backend derived from no other.
    """
    entry = DERIVED_BACKENDS.get(backend)
    if entry == None:
        return None
    return [entry["from"], entry["via"]]

def derived_readers(backend):
    """Visibility for a backend's source files: the backends derived from it.

    device_backend() exports a parent backend's csrc/ files with this
    visibility, so that only a derived backend's translation rules can name
    them (what they may do with them is checked by the aspect and the audit).

    Args:
      backend: a backend's directory name under third_device/.

    Returns:
      "//third_device/<derived>:__pkg__" for every DERIVED_BACKENDS entry whose
      parent is `backend`; empty for a backend nothing is derived from.
    """
    return [
        "//third_device/%s:__pkg__" % derived
        for derived, entry in sorted(DERIVED_BACKENDS.items())
        if entry["from"] == backend
    ]

def is_translation_read(repo, package, kind, dep_repo, dep_package, dep_is_source):
    """Whether an edge is a derived backend's translation rule reading its parent's source.

    Args:
      repo: repository of the depending target.
      package: package of the depending target.
      kind: rule kind of the depending target (e.g. "hipify_sources").
      dep_repo: repository of the dependency.
      dep_package: package of the dependency.
      dep_is_source: whether the dependency is a source file (not a rule, not
        a generated file).

    Returns:
      True only for a source file of the parent, read by a rule of a "via" kind.
    """
    derived = derived_from(backend_of(repo, package))
    if derived == None or not dep_is_source or dep_repo:
        return False
    parent, kinds = derived
    return kind in kinds and backend_of(dep_repo, dep_package) == parent

def device_source(path):
    """Whether a file is a device source or object (policy DEVICE_SOURCE_SUFFIXES).

    Args:
      path: a file path or label name.

    Returns:
      The matching suffix, or None.
    """
    for suffix in DEVICE_SOURCE_SUFFIXES:
        if path.endswith(suffix):
            return suffix
    return None

def link_flag_library(flag):
    """The shared library a link flag asks for: "-lm" -> "libm.so", "-l:libx.so.1" -> itself.

    Args:
      flag: one link flag; "-Wl,a,b" is read part by part by the caller.

    Returns:
      The library file name, or None for a flag that names no library.
    """
    if not flag.startswith("-l") or len(flag) < 3:
        return None
    name = flag[2:]
    if name.startswith(":"):
        return name[1:]
    return "lib%s.so" % name

def core_may_link(flag):
    """Whether core may pass this link flag (its -l libraries: policy CORE_NEEDED).

    Args:
      flag: one link flag, as a target's linkopts or a dependency's
        user_link_flags give it.

    Returns:
      The offending library file name, or None when the flag is allowed.
    """
    parts = flag[len("-Wl,"):].split(",") if flag.startswith("-Wl,") else [flag]
    for part in parts:
        library = link_flag_library(part)
        if library == None:
            continue
        allowed = False
        for prefix in CORE_NEEDED:
            if library.startswith(prefix):
                allowed = True
        if not allowed:
            return library
    return None
