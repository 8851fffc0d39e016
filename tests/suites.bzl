"""One Bazel test target per test file: `bazel test //...` runs the whole suite.

Each macro's `name` is the test file's path under tests/ without `.py`
(`tools_test(name = "tools/test_scan")` runs tests/tools/test_scan.py as
`//tests:tools/test_scan`), so adding a test file is one line in
tests/BUILD.bazel. The kind says what the test may read, which is
what its cached result depends on:

  runtime_test    imports torch_core and built backends (deps, not the tree)
  tools_test      the torchsplit tools (tools/python), tests/tools/fixtures
  workspace_test  runs Bazel or the repository's commands on a copy of the
                  checkout (//:workspace: every file but docs/ and README.md;
                  docs = [...] adds the documents it reads; graph_only keeps what
                  loading the graph reads), with a nested Bazel whose output root
                  is under TEST_TMPDIR (tests/builds.py)

Every target gets a size and a timeout. pytest_test adds no __init__.py to the
runfiles' directories: test directories stay plain directories, as in a
checkout, so pytest puts each test's directory on sys.path (its helpers import
by name). tests/tools/test_ownership.py fails
when a tests/**/test_*.py file has no target.
"""

load("//tools/build_defs:pytest.bzl", "pytest_test")
load("//tools/build_defs:workspace.bzl", "workspace_manifest")

_RUNTIME_DEPS = [
    "//core:torch_core",
    "//third_device/torch_emu",
]

_TEST_BACKENDS = [
    "//tests:backends/_fake_device.so",
    "//tests:backends/_faulty_device.so",
]

def _runfiles_path(label):
    """Where a manifest target of the root or tests package lies in the runfiles."""
    if label.startswith("//:"):
        return label[len("//:"):]
    return "tests/" + label[len(":"):]

def _src(name):
    return name + ".py"

def _helpers(src):
    """The shared helpers, and the non-test Python files beside `src` (conftest, helpers)."""
    directory = src.rsplit("/", 1)[0]
    return ["builds.py", "conftest.py"] + native.glob(
        [directory + "/*.py"],
        exclude = [directory + "/test_*.py"],
    )

def runtime_test(name, size = "small", timeout = None, deps = [], data = [], **kwargs):
    """A test of the runtime: torch_core, torch_emu and the test-only backends.

    Args:
      name: the test file's path under tests/, without ".py".
      size: Bazel test size.
      timeout: Bazel test timeout (default: the size's).
      deps: further py_library dependencies (e.g. another backend).
      data: further runtime data.
      **kwargs: further pytest_test attributes (env, args, target_compatible_with).
    """
    pytest_test(
        name = name,
        size = size,
        timeout = timeout,
        srcs = [_src(name)] + _helpers(_src(name)),
        data = _TEST_BACKENDS + data,
        deps = _RUNTIME_DEPS + deps,
        **kwargs
    )

def tools_test(name, size = "small", timeout = None, data = [], **kwargs):
    """A test of the torchsplit tools, on fixtures: no backend, no copy of the tree.

    Args:
      name: the test file's path under tests/, without ".py".
      size: Bazel test size.
      timeout: Bazel test timeout.
      data: further runtime data.
      **kwargs: further pytest_test attributes.
    """
    pytest_test(
        name = name,
        size = size,
        timeout = timeout,
        srcs = [_src(name)] + _helpers(_src(name)),
        data = [
            "//tools/python:all_files",
            "//:tools_inputs",
        ] + native.glob(["tools/fixtures/**"]) + data,
        **kwargs
    )

# What `tools/dev build` builds, for the workspace tests that expect a built tree.
BUILT = [
    "//core:all",
    "//tests:backends/_fake_device.so",
    "//third_device/torch_cuda:all",
    "//third_device/torch_emu:all",
    "//third_device/torch_hip:all",
]

def workspace_test(name, size = "large", timeout = None, docs = [], graph_only = False, build = [], tags = [], data = [], **kwargs):
    """A test that runs Bazel (or tools/dev, tools/torchsplit) on a copy of the checkout.

    Its result is cached on every file of the workspace (//:workspace), so any
    change to the tree reruns it; a docs-only change does not, unless to a document
    it names in docs.
    Tagged no-sandbox: the nested Bazel runs its own sandboxes and processes,
    and reads the machine's toolkits (the venv, the hermetic CUDA, hipcc).

    Args:
      name: the test file's path under tests/, without ".py".
      size: Bazel test size.
      timeout: Bazel test timeout.
      docs: the documents it reads (labels: "//:README.md", "//:docs/<file>.md"); a
        change to any other document does not rerun it.
      graph_only: whether the test only loads and queries the graph (//:workspace_graph:
        every other file is an empty stand-in, so a change to a source file's content
        does not rerun it).
      build: targets built in the copy before the test runs (BUILT: tools/dev build's).
      tags: further tags.
      data: further runtime data.
      **kwargs: further pytest_test attributes (shard_count, args).
    """
    if graph_only:
        workspace = "//:workspace_graph"
    elif docs:
        # Its own manifest: the workspace plus the documents it reads, and no other.
        workspace = ":%s.workspace" % name
        workspace_manifest(
            name = name + ".workspace",
            srcs = ["//:all_files"] + docs,
            names_only = ["//:docs"],
            testonly = True,
        )
    else:
        workspace = "//:workspace"
    pytest_test(
        name = name,
        size = size,
        timeout = timeout,
        srcs = [_src(name)] + _helpers(_src(name)),
        data = [workspace] + data,
        env = {
            "TORCHSPLIT_TEST_BUILD": " ".join(build),
            "TORCHSPLIT_TEST_WORKSPACE": _runfiles_path(workspace) + ".manifest",
        },
        tags = ["no-sandbox"] + tags,
        **kwargs
    )
