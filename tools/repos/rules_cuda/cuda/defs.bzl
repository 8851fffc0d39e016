"""Public API of torchsplit's in-house rules_cuda (same names as bazel-contrib/rules_cuda)."""

load("@local_cuda//:defs.bzl", "TOOLKIT_FOUND")
load("//cuda/private:cuda_library.bzl", "cuda_library_rule")

def requires_cuda():
    """target_compatible_with value for anything that needs CUDA.

    Incompatible when --@rules_cuda//cuda:enable=false or when no toolkit was
    detected; the unmet constraint's name says which.

    Returns:
      A select() usable as target_compatible_with.
    """
    return select({
        "@rules_cuda//cuda:is_enabled": [] if TOOLKIT_FOUND else ["@rules_cuda//cuda:cuda_toolkit_not_found"],
        "//conditions:default": ["@rules_cuda//cuda:cuda_disabled_by_flag"],
    })

def if_cuda(if_true, if_false = []):
    """Selects if_true when CUDA is enabled and a toolkit was found, else if_false.

    Args:
      if_true: value when CUDA is usable.
      if_false: value otherwise.

    Returns:
      A select().
    """
    return select({
        "@rules_cuda//cuda:is_enabled": if_true if TOOLKIT_FOUND else if_false,
        "//conditions:default": if_false,
    })

def _with_compat(kwargs):
    # CUDA targets always require CUDA, on top of whatever the caller asks for.
    kwargs["target_compatible_with"] = requires_cuda() + kwargs.get("target_compatible_with", [])
    return kwargs

def cuda_library(name, **kwargs):
    """A library of CUDA sources compiled by nvcc (see cuda/private/cuda_library.bzl).

    Args:
      name: target name.
      **kwargs: srcs, hdrs, deps, copts, host_copts, defines, includes,
        linkopts, alwayslink, and the common attributes.
    """
    cuda_library_rule(name = name, **_with_compat(kwargs))

def _split_binary_kwargs(name, kwargs):
    lib_keys = ["srcs", "hdrs", "copts", "host_copts", "defines", "includes", "alwayslink"]
    lib_kwargs = {k: kwargs.pop(k) for k in lib_keys if k in kwargs}
    lib_kwargs["deps"] = kwargs.pop("deps", [])
    lib_kwargs["alwayslink"] = True
    for common in ["visibility", "tags", "testonly"]:
        if common in kwargs:
            lib_kwargs[common] = kwargs[common]
    cuda_library(name = name + "_cuda", **lib_kwargs)
    kwargs["deps"] = [":" + name + "_cuda"]
    return _with_compat(kwargs)

def cuda_binary(name, **kwargs):
    """An executable whose sources are compiled by nvcc.

    Args:
      name: target name.
      **kwargs: cuda_library attributes plus cc_binary ones.
    """
    native.cc_binary(name = name, **_split_binary_kwargs(name, kwargs))

def cuda_test(name, **kwargs):
    """A test whose sources are compiled by nvcc.

    Args:
      name: target name.
      **kwargs: cuda_library attributes plus cc_test ones.
    """
    native.cc_test(name = name, **_split_binary_kwargs(name, kwargs))
