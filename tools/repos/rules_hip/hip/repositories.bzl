"""WORKSPACE entry point: the HIP toolkit and the hipify table. Nothing is downloaded."""

load("//hip/private:hipify_mappings.bzl", "hipify_mappings")
load("//hip/private:local_hip.bzl", "local_hip")

def rules_hip_dependencies(toolkit_visibility = ["//visibility:public"]):
    """Declares @local_hip (the detected HIP toolkit) and @hipify_mappings (torch's table).

    Args:
      toolkit_visibility: who may depend on @local_hip's targets; a monorepo
        that keeps vendors out of its core narrows it to its device packages.
    """
    local_hip(name = "local_hip", toolkit_visibility = toolkit_visibility)
    hipify_mappings(name = "hipify_mappings")
