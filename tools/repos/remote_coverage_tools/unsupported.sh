#!/bin/sh
echo "remote_coverage_tools: coverage is not available in torchsplit's offline Bazel setup" >&2
exit 1
