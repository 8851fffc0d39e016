"""WORKSPACE entry points, named as in bazel-contrib/rules_cuda."""

load("//cuda/private:cuda_wheels.bzl", _cuda_wheels = "cuda_wheels")
load("//cuda/private:local_cuda.bzl", "local_cuda")

def rules_cuda_dependencies(toolkit_visibility = ["//visibility:public"], hermetic_locks = {}):
    """Declares @local_cuda: the hermetic toolkit of a lock, or the detected one. Nothing is downloaded.

    Args:
      toolkit_visibility: who may depend on @local_cuda's targets; a monorepo
        that keeps CUDA out of its core narrows it to its device packages.
      hermetic_locks: {toolkit version: label of its pip --require-hashes lock},
        the first being the default (see cuda/private/hermetic.bzl); empty
        means the machine's toolkit, detected as upstream rules_cuda does.
    """
    local_cuda(name = "local_cuda", toolkit_visibility = toolkit_visibility, locks = hermetic_locks)

def cuda_wheels(name = "cuda_wheels", wheel_visibility = ["//visibility:public"], hermetic_locks = {}):
    """Declares @cuda_wheels: NVRTC and NCCL from the hermetic lock, or the build Python's wheels.

    Args:
      name: the repository's name.
      wheel_visibility: who may depend on its targets.
      hermetic_locks: the same dict as rules_cuda_dependencies'.
    """
    _cuda_wheels(name = name, wheel_visibility = wheel_visibility, locks = hermetic_locks)
