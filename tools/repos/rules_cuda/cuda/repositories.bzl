"""WORKSPACE entry points, named as in bazel-contrib/rules_cuda."""

load("//cuda/private:local_cuda.bzl", "local_cuda")

def rules_cuda_dependencies():
    """Declares @local_cuda (the detected toolkit). Nothing is downloaded."""
    local_cuda(name = "local_cuda")
