"""Public API of torchsplit's in-house rules_hip (the shape of rules_cuda's defs.bzl)."""

load("@hipify_mappings//:defs.bzl", "HIPIFY_FOUND")
load("@local_hip//:defs.bzl", "HIP_FOUND")
load("//hip/private:hip_library.bzl", "hip_library_rule")

# The rule keeps its name (its kind is "hipify_sources"): the layering policy's
# DERIVED_BACKENDS names translation rules by kind.
load("//hip/private:hipify_sources.bzl", _hipify_sources = "hipify_sources")

def requires_hip():
    """target_compatible_with value for anything that needs the HIP toolkit.

    Incompatible when --@rules_hip//hip:enable=false or when no toolkit was
    detected; the unmet constraint's name says which.

    Returns:
      A select() usable as target_compatible_with.
    """
    return select({
        "@rules_hip//hip:is_enabled": [] if HIP_FOUND else ["@rules_hip//hip:hip_toolkit_not_found"],
        "//conditions:default": ["@rules_hip//hip:hip_disabled_by_flag"],
    })

def requires_hipify():
    """target_compatible_with value for translated sources (hipify_sources).

    Returns:
      A list: incompatible (@rules_hip//hip:hipify_mappings_not_found) without
      the torch wheel's hipify table.
    """
    return [] if HIPIFY_FOUND else ["@rules_hip//hip:hipify_mappings_not_found"]

def hip_library(name, **kwargs):
    """A library of HIP sources compiled by hipcc (see hip/private/hip_library.bzl).

    Args:
      name: target name.
      **kwargs: srcs, hdrs, deps, copts, defines, local_defines, linkopts,
        alwayslink, and the common attributes.
    """
    kwargs["target_compatible_with"] = requires_hip() + kwargs.get("target_compatible_with", [])
    hip_library_rule(name = name, **kwargs)

def hipify_sources(name, **kwargs):
    """CUDA sources translated to HIP at build time (see hip/private/hipify_sources.bzl).

    Args:
      name: target name.
      **kwargs: srcs, renames, and the common attributes.
    """
    kwargs["target_compatible_with"] = requires_hipify() + kwargs.get("target_compatible_with", [])
    _hipify_sources(name = name, **kwargs)
