"""The `rules` struct that upstream's c10 build.bzl files take (`define_targets(rules)`), for core.

Upstream's //:tools/bazel.bzl hands every c10 BUILD file a struct that loads
rules_cuda, rules_python and pip_deps. Under the split, core loads none of
them: this struct has no cuda_library, no if_cuda and no
requires_cuda_enabled. A build.bzl that asks for one of them fails to load,
so the core/CUDA boundary holds in Starlark too (c10/build.bzl's if_cuda
dependency on //c10/cuda is removed by torch_patches/0001).
"""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library", "cc_test")
load("//c10/macros:cmake_configure_file.bzl", "cmake_configure_file")

rules = struct(
    cc_binary = cc_binary,
    cc_library = cc_library,
    cc_test = cc_test,
    cmake_configure_file = cmake_configure_file,
    filegroup = native.filegroup,
    glob = native.glob,
    select = select,
    test_suite = native.test_suite,
)
