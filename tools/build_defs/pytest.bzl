"""pytest_test: a py_test that runs pytest on its sources.

Writes JUnit XML to $XML_OUTPUT_FILE (Bazel's test.xml) and honours
--test_filter, which Bazel hands over as $TESTBRIDGE_TEST_ONLY and which is
passed to pytest as a -k expression.
"""

load("@rules_python//python:defs.bzl", "py_test")

def pytest_test(name, srcs, deps = [], args = [], data = [], **kwargs):
    """A Bazel test target that runs pytest over `srcs`.

    Args:
      name: target name.
      srcs: test files (test_*.py) and helpers.
      deps: py_library dependencies.
      args: extra pytest arguments.
      data: runtime data.
      **kwargs: further py_test attributes (size, tags, env, ...).
    """
    runner = "//tools/build_defs:pytest_runner.py"

    # tests/conftest.py installs the run-time layering guard from it (docs/layering.md).
    guard = "//tools/python:layering_guard"
    py_test(
        name = name,
        srcs = srcs + [runner],
        main = runner,
        args = args + ["$(rootpath %s)" % s for s in srcs if s.endswith(".py") and s.split("/")[-1].startswith("test_")],
        data = data + [s for s in srcs if s.endswith("conftest.py")],
        deps = deps + ([guard] if guard not in deps else []),
        # No __init__.py in the runfiles' directories: tests/torch_emu would otherwise be a
        # regular package that shadows the torch_emu package, and fixture trees would
        # gain files. Directories stay as they are in a checkout.
        legacy_create_init = False,
        python_version = "PY3",
        srcs_version = "PY3",
        **kwargs
    )
