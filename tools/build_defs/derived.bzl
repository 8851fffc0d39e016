"""derived_backend: a device backend whose sources are another backend's, translated at build time.

The RFC's second way for a vendor: a CUDA-like backend reuses torch_cuda's
code instead of forking it. torch_hip's BUILD file is one derived_backend()
call; its build_variables.bzl names the parent's files it translates
(TRANSLATED, by module) and its own hand-written sources (the standard
lists). For each module this stamps, before device_backend()'s targets:

  :<module>_translated          the module's C++ sources, translated
  :<module>_kernels_translated  its device sources (.cu -> .hip), translated
  :headers_translated           the parent's headers, translated
  :python_translated            Python modules of the parent's package, translated
  :extension_translated         the parent extension's version script, translated
  :wheel                        the backend's wheel (backend_wheel)

with `translator` (e.g. rules_hip's hipify_sources), one action per file:
a one-line change in a parent's .cu re-runs that file's translation and
compile, and nothing under the derived backend changes. The layering policy
names the relation (DERIVED_BACKENDS in tools/layering/policy.bzl): only a
translator rule may read the parent's files, and only its source files.
"""

load("//tools/build_defs:backend.bzl", "device_backend")
load("//tools/build_defs:wheel.bzl", "backend_wheel")

def _parent_label(path, parent):
    prefix = "third_device/%s/" % parent
    if not path.startswith(prefix):
        fail("derived_backend: %s is not a file of the parent backend %s (expected %s...)" % (path, parent, prefix))
    return "//third_device/%s:%s" % (parent, path[len(prefix):])

def derived_backend(name, parent, translated, renames, translator, wheel_summary, **kwargs):
    """device_backend() over `parent`'s sources translated by `translator` (see the file docstring).

    Args:
      name: the backend, as for device_backend.
      parent: the backend whose sources are translated (its directory under third_device/).
      translated: dict key -> repository-relative paths of the parent's files;
        keys are BACKEND_MODULES, "headers", "python" and "extension" (the
        extension's linker version script).
      renames: the project's renames after the API translation (dict old -> new).
      translator: the translation rule macro, called with name, srcs, renames,
        visibility (e.g. hipify_sources).
      wheel_summary: the one-line description of its wheel (:wheel, with the
        translated Python modules; tools/dev wheels builds it).
      **kwargs: device_backend's arguments (extension, sources, kernel_library, ...).
    """
    generated = {}
    for key in sorted(translated.keys()):
        paths = translated[key]
        groups = [
            (key, [p for p in paths if not p.endswith(".cu")]),
            (key + "_kernels", [p for p in paths if p.endswith(".cu")]),
        ]
        for group, group_paths in groups:
            if not group_paths:
                continue
            translator(
                name = group + "_translated",
                srcs = [_parent_label(p, parent) for p in group_paths],
                renames = renames,
                visibility = ["//visibility:private"],
            )
            generated[group] = [":%s_translated" % group]
    script = generated.pop("extension", None)
    if script:
        kwargs["extension_linker_inputs"] = kwargs.get("extension_linker_inputs", []) + script
        kwargs["extension_linkopts"] = kwargs.get("extension_linkopts", []) + [
            "-Wl,--version-script=$(location %s)" % script[0],
        ]
    backend_wheel(
        name = "wheel",
        backend = name,
        extension = kwargs["extension"],
        extra_srcs = generated.get("python", []),
        summary = wheel_summary,
        target_compatible_with = kwargs.get("target_compatible_with", []),
    )
    device_backend(name = name, generated = generated, **kwargs)
