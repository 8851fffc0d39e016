"""Reading tools/layering/policy.bzl: pattern matching and visibility lists.

Pure Starlark on strings (no Bazel builtins), so that the Python audit's
matcher is checked against this one (tests/layering/test_policy.py).
"""

load(":policy.bzl", "BACKEND_VISIBILITY", "DERIVED_BACKENDS", "EXEMPT", "FORBIDDEN", "LAYERS", "REPOSITORIES")

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

def allowed_repositories(repo, package):
    """The external repositories a package may reach (policy REPOSITORIES).

    Args:
      repo: the repository name ("" for the main one).
      package: the package path.

    Returns:
      The list of repository names of the package's layer, or None when no
      allowlist applies (exempt packages, layers without one, other repositories).
    """
    if repo or is_exempt(repo, package):
        return None
    return REPOSITORIES.get(layer_of(repo, package))

# -- derived backends (DERIVED_BACKENDS, issue 27) ----------------------------

def derived_readers(backend):
    """Visibility for a backend's source files: the backends derived from it.

    Args:
      backend: a backend's directory name under third_device/.

    Returns:
      "//third_device/<derived>:__pkg__" for every DERIVED_BACKENDS entry whose
      "from" is `backend` (empty for most backends).
    """
    return [
        "//third_device/%s:__pkg__" % derived
        for derived, entry in sorted(DERIVED_BACKENDS.items())
        if entry["from"] == backend
    ]

def derived_parent(repo, package, kind):
    """The package whose source files a rule may read as a translation rule.

    Args:
      repo: the rule's repository name ("" for the main one).
      package: the rule's package.
      kind: the rule's kind (e.g. "hipify_sources").

    Returns:
      "third_device/<parent>" when `package` is a derived backend's and `kind`
      is one of its "via" kinds, else None.
    """
    if repo:
        return None
    for derived, entry in DERIVED_BACKENDS.items():
        if package == "third_device/" + derived and kind in entry["via"]:
            return "third_device/" + entry["from"]
    return None
