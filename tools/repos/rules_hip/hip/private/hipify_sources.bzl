"""hipify_sources: CUDA sources translated to HIP at build time, one action per file.

Each source of `srcs` (typically another package's files, e.g. a CUDA
backend's) becomes a file of this package at the same path relative to its own
package, renamed by `renames` (`csrc/framework/CUDAHooks.cpp` ->
`csrc/framework/HIPHooks.cpp`) and with `.cu` -> `.hip`. The action
(hipify.py) maps the CUDA API with torch.utils.hipify's table
(@hipify_mappings, from the torch wheel), fails on any CUDA API name left
unmapped, then applies `renames` to the text. Dependents use the target like
a filegroup: cc_library srcs/hdrs take the C++ and headers, hip_library the
`.hip` files.

Action keys hold the mapping file's content and the renames, never a machine
path: a changed table or rename re-translates, a venv elsewhere does not.
"""

def _sorted_keys(renames):
    # Longest first, then alphabetical: the order hipify.py's alternation uses.
    return [k for _, k in sorted([(-len(k), k) for k in renames.keys()])]

def rename_path(path, renames):
    """Applies `renames` to a path as hipify.py applies them to text.

    Args:
      path: a relative path.
      renames: dict old substring -> new substring.

    Returns:
      The renamed path, with a trailing `.cu` turned into `.hip`.
    """
    keys = _sorted_keys(renames)
    out = ""
    i = 0
    for _ in range(len(path)):
        if i >= len(path):
            break
        hit = None
        for key in keys:
            if path[i:].startswith(key):
                hit = key
                break
        if hit == None:
            out += path[i]
            i += 1
        else:
            out += renames[hit]
            i += len(hit)
    if out.endswith(".cu"):
        out = out[:-len(".cu")] + ".hip"
    return out

def _hipify_sources_impl(ctx):
    renames = ctx.attr.renames
    outputs = []
    seen = {}
    for src in ctx.files.srcs:
        package = src.owner.package
        relative = src.short_path[len(package) + 1:] if package else src.short_path
        path = rename_path(relative, renames)
        if path in seen:
            fail("hipify_sources %s: %s and %s both translate to %s" % (ctx.label, seen[path], src.short_path, path))
        seen[path] = src.short_path
        out = ctx.actions.declare_file(path)
        args = ctx.actions.args()
        args.add("--mappings", ctx.file._mappings)
        for old in _sorted_keys(renames):
            args.add("--rename", "%s=%s" % (old, renames[old]))
        args.add("--origin", src.short_path)
        args.add(src)
        args.add(out)
        ctx.actions.run(
            executable = ctx.executable._hipify,
            arguments = [args],
            inputs = [src, ctx.file._mappings],
            outputs = [out],
            mnemonic = "Hipify",
            progress_message = "Hipifying %s" % src.short_path,
        )
        outputs.append(out)
    return [DefaultInfo(files = depset(outputs))]

hipify_sources = rule(
    implementation = _hipify_sources_impl,
    attrs = {
        "renames": attr.string_dict(doc = "Project renames applied after the CUDA API mapping, to the text and the output paths: old substring -> new (longest first, one pass)."),
        "srcs": attr.label_list(allow_files = True, mandatory = True, doc = "CUDA sources and headers to translate."),
        "_hipify": attr.label(default = "//hip/private:hipify", executable = True, cfg = "exec"),
        "_mappings": attr.label(default = "@hipify_mappings//:cuda_to_hip_mappings.py", allow_single_file = True),
    },
    doc = "Translates CUDA sources to HIP with torch.utils.hipify's mappings (see the file docstring).",
)
