"""Turns build_variables.bzl's repository-relative paths into package-relative ones."""

def package_sources(paths):
    """Strips the calling BUILD file's package from each repository-relative path.

    Args:
      paths: paths relative to the repository root, as build_variables.bzl lists them.

    Returns:
      The same paths relative to the calling package. Fails, naming the path,
      when one lies outside the package (it belongs in another BUILD file).
    """
    prefix = native.package_name() + "/"
    out = []
    for path in paths:
        if not path.startswith(prefix):
            fail("build_variables.bzl lists '%s' for package //%s, but it is outside that package" % (path, native.package_name()))
        out.append(path[len(prefix):])
    return out
