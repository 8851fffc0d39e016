"""cuda_library: compiles each source with nvcc and hands the objects on through CcInfo.

Works with Bazel 4.2.3's cc_common: objects are archived with the C++
toolchain's ar into a PIC static library, which cc_library/cc_binary
dependents link like any other.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")
load("//cuda/private:archs.bzl", "parse_archs")
load("//cuda/private:flags.bzl", "StringFlagInfo")

_CUDA_SOURCE = [".cu", ".cc", ".cpp", ".cxx", ".c++", ".c"]
_HEADER = [".h", ".hh", ".hpp", ".hxx", ".cuh", ".inc", ".inl"]

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

def _compile(ctx, cc_toolchain, compilation_context, src, headers, gencode):
    obj = ctx.actions.declare_file("_objs/%s/%s.o" % (ctx.label.name, src.short_path.replace("/", "_")))
    args = ctx.actions.args()
    args.add("-x", "cu")
    args.add("-ccbin", cc_toolchain.compiler_executable)
    args.add("-std=c++17")

    # nvcc names its temporaries tmpxft_<pid>_..., and those names end up in the
    # object: two compiles of the same source differ, so everything linked from
    # it misses the remote cache after any local rebuild. Temporaries next to
    # the object (named after it) make the output deterministic.
    args.add("--objdir-as-tempdir")
    args.add_all(_mode_flags(ctx))
    args.add_all(gencode)
    args.add("-Xcompiler", "-fPIC")
    for flag in ctx.attr.host_copts:
        args.add("-Xcompiler", flag)
    args.add_all(compilation_context.defines, format_each = "-D%s")
    args.add_all(ctx.attr.local_defines, format_each = "-D%s")
    args.add_all(compilation_context.includes, format_each = "-I%s")
    args.add_all(compilation_context.quote_includes, format_each = "-I%s")
    args.add_all(compilation_context.system_includes, format_each = "-isystem=%s")
    args.add_all(ctx.attr.copts)
    args.add("-c", src)
    args.add("-o", obj)
    ctx.actions.run(
        executable = ctx.file._nvcc,
        arguments = [args],
        inputs = depset([src], transitive = [headers, ctx.attr._compiler_deps.files, cc_toolchain.all_files]),
        outputs = [obj],
        mnemonic = "CudaCompile",
        # nvcc drives the host compiler, which needs PATH to find `as`; the
        # default shell env is --incompatible_strict_action_env's fixed PATH.
        use_default_shell_env = True,
        progress_message = "Compiling %s with nvcc" % src.short_path,
    )
    return obj

def _cuda_library_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    deps = ctx.attr.deps + [ctx.attr._runtime]
    dep_infos = [d[CcInfo] for d in deps]
    merged_deps = cc_common.merge_cc_infos(cc_infos = dep_infos)

    srcs = [f for f in ctx.files.srcs if _has_suffix(f, _CUDA_SOURCE)]
    private_hdrs = [f for f in ctx.files.srcs if _has_suffix(f, _HEADER)]
    pkg = ctx.label.package
    root = ctx.label.workspace_root
    base = "/".join([p for p in [root, pkg] if p])
    includes = [("%s/%s" % (base, i)).lstrip("/") if i != "." else (base or ".") for i in ctx.attr.includes]
    includes = includes + [("%s/%s" % (ctx.bin_dir.path, inc)) for inc in includes]

    own_context = cc_common.create_compilation_context(
        headers = depset(ctx.files.hdrs),
        includes = depset(includes),
        defines = depset(ctx.attr.defines),
    )
    compile_context = cc_common.merge_cc_infos(cc_infos = [CcInfo(compilation_context = own_context), merged_deps]).compilation_context
    headers = depset(private_hdrs, transitive = [compile_context.headers])
    gencode = parse_archs(ctx.attr._archs[StringFlagInfo].value)

    objects = [_compile(ctx, cc_toolchain, compile_context, src, headers, gencode) for src in srcs]

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
            mnemonic = "CudaArchive",
            use_default_shell_env = True,
            progress_message = "Archiving %s" % archive.short_path,
        )
        library = cc_common.create_library_to_link(
            actions = ctx.actions,
            feature_configuration = feature_configuration,
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
    cc_info = cc_common.merge_cc_infos(cc_infos = [own_info] + dep_infos)
    return [
        DefaultInfo(files = depset(objects)),
        cc_info,
    ]

cuda_library_rule = rule(
    implementation = _cuda_library_impl,
    attrs = {
        "alwayslink": attr.bool(default = False, doc = "Link every object even if unreferenced."),
        "copts": attr.string_list(doc = "Extra nvcc options."),
        "defines": attr.string_list(doc = "Preprocessor defines, propagated to dependents."),
        "deps": attr.label_list(providers = [CcInfo], doc = "cc_library or cuda_library dependencies."),
        "hdrs": attr.label_list(allow_files = _HEADER, doc = "Public headers."),
        "host_copts": attr.string_list(doc = "Extra host-compiler options (passed with -Xcompiler)."),
        "includes": attr.string_list(doc = "Include directories relative to the package, propagated to dependents."),
        "linkopts": attr.string_list(doc = "Linker options propagated to dependents."),
        "local_defines": attr.string_list(doc = "Preprocessor defines for this target's sources only."),
        "srcs": attr.label_list(allow_files = _CUDA_SOURCE + _HEADER, doc = "Sources (.cu and C++) compiled by nvcc, and private headers."),
        "_archs": attr.label(default = "//cuda:archs"),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
        "_compiler_deps": attr.label(default = "@local_cuda//:compiler_deps", cfg = "exec"),
        "_nvcc": attr.label(default = "@local_cuda//:nvcc", allow_single_file = True, cfg = "exec"),
        "_runtime": attr.label(default = "@local_cuda//:cuda_runtime", providers = [CcInfo]),
    },
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
    fragments = ["cpp"],
    incompatible_use_toolchain_transition = True,
    doc = "Compiles CUDA sources with nvcc into a library that C++ targets can depend on.",
)
