"""WORKSPACE entry points, named as in bazel-contrib/rules_cuda."""

load("//cuda/private:cuda_wheels.bzl", _cuda_wheels = "cuda_wheels")
load("//cuda/private:local_cuda.bzl", "local_cuda")

def rules_cuda_dependencies(toolkit_visibility = ["//visibility:public"]):
    """Declares @local_cuda (the detected toolkit). Nothing is downloaded.

    Args:
      toolkit_visibility: who may depend on @local_cuda's targets; a monorepo
        that keeps CUDA out of its core narrows it to its device packages.
    """
    local_cuda(name = "local_cuda", toolkit_visibility = toolkit_visibility)

def cuda_wheels(name = "cuda_wheels", wheel_visibility = ["//visibility:public"]):
    """Declares @cuda_wheels: NVRTC and NCCL from the build Python's NVIDIA wheels.

    Args:
      name: the repository's name.
      wheel_visibility: who may depend on its targets.
    """
    _cuda_wheels(name = name, wheel_visibility = wheel_visibility)
