"""hip_library: compiles each HIP source with hipcc and hands the objects on through CcInfo.

The shape of rules_cuda's cuda_library (same attributes, Bazel 4.2.3's
cc_common): one `HipCompile` action per source, for every --@rules_hip//hip:archs
target, archived into a PIC static library that cc_library/cc_binary
dependents link. hipcc runs with HIP_PLATFORM=amd (without it, hipcc forwards
to nvcc when it finds one) and a fixed PATH; its version stamp
(@local_hip//:version.txt) is an input, so another hipcc misses the cache
instead of reusing objects it did not build.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")
load("//hip/private:archs.bzl", "parse_archs")
load("//hip/private:flags.bzl", "StringFlagInfo")

_HIP_SOURCE = [".hip", ".cu"]
_HEADER = [".h", ".hh", ".hpp", ".cuh", ".inc", ".inl"]

# What hipcc needs from the environment: the platform, and perl and clang on
# a PATH that names no user directory (hipcc finds the rest relative to itself).
_ENV = {"HIP_PLATFORM": "amd", "PATH": "/usr/bin:/bin"}

def _has_suffix(f, suffixes):
    for suffix in suffixes:
        if f.basename.endswith(suffix):
            return True
    return False

def _mode_flags(ctx):
    mode = ctx.var.get("COMPILATION_MODE", "fastbuild")
    if mode == "opt":
        return ["-O3", "-DNDEBUG"]
    if mode == "dbg":
        return ["-g"]
    return ["-O1"]

def _compile(ctx, context, src, inputs, archs):
    obj = ctx.actions.declare_file("_objs/%s/%s.o" % (ctx.label.name, src.short_path.replace("/", "_")))
    args = ctx.actions.args()
    args.add("-x", "hip")
    args.add("-std=c++17")
    args.add("-fPIC")
    args.add_all(archs)
    args.add_all(_mode_flags(ctx))
    args.add_all(context.defines, format_each = "-D%s")
    args.add_all(ctx.attr.local_defines, format_each = "-D%s")
    args.add_all(context.includes, format_each = "-I%s")
    args.add_all(context.quote_includes, format_each = "-iquote%s")
    args.add_all(context.system_includes, format_each = "-isystem%s")
    args.add_all(ctx.attr.copts)
    args.add("-c", src)
    args.add("-o", obj)
    ctx.actions.run(
        executable = ctx.file._hipcc,
        arguments = [args],
        inputs = depset([src], transitive = [inputs]),
        outputs = [obj],
        env = _ENV,
        mnemonic = "HipCompile",
        progress_message = "Compiling %s with hipcc" % src.short_path,
    )
    return obj

def _hip_library_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    features = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    dep_infos = [d[CcInfo] for d in ctx.attr.deps + [ctx.attr._runtime]]
    own_context = cc_common.create_compilation_context(
        headers = depset(ctx.files.hdrs),
        defines = depset(ctx.attr.defines),
    )
    context = cc_common.merge_cc_infos(cc_infos = [CcInfo(compilation_context = own_context)] + dep_infos).compilation_context
    private_hdrs = [f for f in ctx.files.srcs if _has_suffix(f, _HEADER)]
    inputs = depset(private_hdrs, transitive = [context.headers, ctx.attr._compiler_deps.files])
    archs = parse_archs(ctx.attr._archs[StringFlagInfo].value)
    objects = [
        _compile(ctx, context, src, inputs, archs)
        for src in ctx.files.srcs
        if _has_suffix(src, _HIP_SOURCE)
    ]

    linker_inputs = []
    if objects:
        archive = ctx.actions.declare_file("lib%s.pic.a" % ctx.label.name)
        ar_args = ctx.actions.args()
        ar_args.add("rcsD", archive)
        ar_args.add_all(objects)
        ctx.actions.run(
            executable = cc_toolchain.ar_executable,
            arguments = [ar_args],
            inputs = depset(objects, transitive = [cc_toolchain.all_files]),
            outputs = [archive],
            mnemonic = "HipArchive",
            use_default_shell_env = True,
            progress_message = "Archiving %s" % archive.short_path,
        )
        library = cc_common.create_library_to_link(
            actions = ctx.actions,
            feature_configuration = features,
            cc_toolchain = cc_toolchain,
            pic_static_library = archive,
            alwayslink = ctx.attr.alwayslink,
        )
        linker_inputs.append(cc_common.create_linker_input(
            owner = ctx.label,
            libraries = depset([library]),
            user_link_flags = depset(ctx.attr.linkopts),
        ))
    own_info = CcInfo(
        compilation_context = own_context,
        linking_context = cc_common.create_linking_context(linker_inputs = depset(linker_inputs)),
    )
    return [
        DefaultInfo(files = depset(objects)),
        cc_common.merge_cc_infos(cc_infos = [own_info] + dep_infos),
    ]

hip_library_rule = rule(
    implementation = _hip_library_impl,
    attrs = {
        "alwayslink": attr.bool(default = False, doc = "Link every object even if unreferenced."),
        "copts": attr.string_list(doc = "Extra hipcc options."),
        "defines": attr.string_list(doc = "Preprocessor defines, propagated to dependents."),
        "deps": attr.label_list(providers = [CcInfo], doc = "cc_library or hip_library dependencies."),
        "hdrs": attr.label_list(allow_files = _HEADER, doc = "Public headers."),
        "linkopts": attr.string_list(doc = "Linker options propagated to dependents."),
        "local_defines": attr.string_list(doc = "Preprocessor defines for this target's sources only."),
        "srcs": attr.label_list(allow_files = _HIP_SOURCE + _HEADER, doc = "HIP sources (.hip, .cu) compiled by hipcc, and private headers."),
        "_archs": attr.label(default = "//hip:archs"),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
        "_compiler_deps": attr.label(default = "@local_hip//:compiler_deps", cfg = "exec"),
        "_hipcc": attr.label(default = "@local_hip//:hipcc", allow_single_file = True, cfg = "exec"),
        "_runtime": attr.label(default = "@local_hip//:hip_runtime", providers = [CcInfo]),
    },
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
    fragments = ["cpp"],
    incompatible_use_toolchain_transition = True,
    doc = "Compiles HIP sources with hipcc into a library that C++ targets can depend on.",
)
