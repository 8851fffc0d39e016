"""The conformance suite's files, for //tests:conformance_test and each backend's.

tools/build_defs/backend.bzl stamps a :conformance_test into every backend
package from this list; tests/conformance/conftest.py picks the backend from
TORCHSPLIT_CONFORMANCE_BACKENDS.
"""

# One file per capability (torch_core.testing.CAPABILITIES), plus helpers.
CONFORMANCE_SRCS = [
    "builds.py",
    "conftest.py",
    "conformance/__init__.py",
    "conformance/_rank.py",
    "conformance/conftest.py",
    "conformance/test_copies.py",
    "conformance/test_device.py",
    "conformance/test_distributed.py",
    "conformance/test_fusion.py",
    "conformance/test_memory.py",
    "conformance/test_ops.py",
    "conformance/test_profiler.py",
    "conformance/test_streams.py",
]

def conformance_labels():
    """The suite's files as labels, for a test in another package.

    Returns:
      A list of "//tests:<file>" labels.
    """
    return ["//tests:" + src for src in CONFORMANCE_SRCS]
