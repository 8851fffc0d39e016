"""cpu_kernel_library: kernel sources compiled once per CPU capability.

As ATen builds aten/src/ATen/native/cpu: the same sources are compiled for
baseline x86-64 and again for AVX2 and AVX-512, each with CPU_CAPABILITY
naming the build (it names the C++ namespace the kernels live in, so the
builds' symbols never collide). Which build runs is decided at run time
(core/aten/native/cpu/CpuCapability.cpp), so the library stays portable: a
CPU runs only code its instruction set allows.
"""

load("@rules_cc//cc:defs.bzl", "cc_library")

# CPU_CAPABILITY -> its compiler flags. DEFAULT is what every x86-64 CPU runs
# (SSE2). The others may contract a * b + c into one fused multiply-add.
CPU_CAPABILITY_COPTS = {
    "AVX2": ["-mavx2", "-mfma", "-ffp-contract=fast"],
    "AVX512": ["-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx2", "-mfma", "-ffp-contract=fast"],
    "DEFAULT": [],
}

def cpu_kernel_library(name, srcs, hdrs, deps = [], **kwargs):
    """<name>: `srcs` built for every CPU capability, linked together.

    <name> itself compiles them for the baseline (so `bazel query
    labels(srcs, <name>)` lists them, as build_variables.bzl does) and depends
    on <name>_AVX2 and <name>_AVX512, the same sources with those flags.

    Args:
      name: target name.
      srcs: the kernel sources (each defines its symbols in namespace CPU_CAPABILITY).
      hdrs: headers they include.
      deps: their C++ dependencies.
      **kwargs: common cc_library attributes (includes, visibility).
    """
    variants = []
    for capability, copts in CPU_CAPABILITY_COPTS.items():
        if capability == "DEFAULT":
            continue
        variant = "%s_%s" % (name, capability)
        cc_library(
            name = variant,
            srcs = srcs,
            hdrs = hdrs,
            copts = ["-DCPU_CAPABILITY=" + capability] + copts,
            deps = deps,
            linkstatic = True,
            **kwargs
        )
        variants.append(":" + variant)
    cc_library(
        name = name,
        srcs = srcs,
        hdrs = hdrs,
        copts = ["-DCPU_CAPABILITY=DEFAULT"] + CPU_CAPABILITY_COPTS["DEFAULT"],
        deps = deps + variants,
        linkstatic = True,
        **kwargs
    )
