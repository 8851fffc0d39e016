"""Entry point of pytest_test targets: runs pytest the way `bazel test` expects."""

from __future__ import annotations

import os
import sys

import pytest


def pytest_args(argv: list[str], environ: dict[str, str]) -> list[str]:
    """Translates Bazel's test environment into pytest arguments."""
    args = ["-p", "no:cacheprovider", *argv]
    xml = environ.get("XML_OUTPUT_FILE")
    if xml:
        args += ["--junitxml", xml]
    test_filter = environ.get("TESTBRIDGE_TEST_ONLY")
    if test_filter:
        args += ["-k", test_filter]
    return args


if __name__ == "__main__":
    sys.exit(pytest.main(pytest_args(sys.argv[1:], dict(os.environ))))
