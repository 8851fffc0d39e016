"""Finds the Python interpreter a repository rule should use."""

PYTHON_ENVIRON = ["PYTHON_BIN_PATH", "PATH"]

def find_python(rctx):
    """Returns the interpreter: $PYTHON_BIN_PATH, else python3 on PATH.

    tools/bazel sets PYTHON_BIN_PATH to the project's virtualenv when it
    exists, so every launcher resolves the same interpreter.

    Args:
      rctx: the repository context.

    Returns:
      The interpreter's absolute path as a string.
    """
    explicit = rctx.os.environ.get("PYTHON_BIN_PATH")
    if explicit:
        if not rctx.path(explicit).exists:
            fail("$PYTHON_BIN_PATH=%s does not exist; run tools/dev or unset it" % explicit)
        return explicit
    found = rctx.which("python3")
    if found == None:
        fail("no python3 on PATH and no $PYTHON_BIN_PATH; run tools/dev to create the project's virtualenv")
    return str(found)

def run_python(rctx, python, code):
    """Runs a Python snippet with the interpreter and returns its stripped stdout.

    Args:
      rctx: the repository context.
      python: interpreter path.
      code: the snippet.

    Returns:
      stdout, stripped.
    """
    result = rctx.execute([python, "-c", code])
    if result.return_code != 0:
        fail("%s -c %r failed:\n%s" % (python, code, result.stderr))
    return result.stdout.strip()
