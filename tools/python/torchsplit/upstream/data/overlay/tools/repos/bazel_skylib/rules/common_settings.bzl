"""Offline stand-in for bazel_skylib's rules/common_settings.bzl: bool_flag and string_flag."""

BuildSettingInfo = provider(
    doc = "The value of a build setting (as bazel_skylib names it).",
    fields = ["value"],
)

def _impl(ctx):
    return [BuildSettingInfo(value = ctx.build_setting_value)]

bool_flag = rule(
    implementation = _impl,
    build_setting = config.bool(flag = True),
    doc = "A bool-typed build setting that can be set on the command line.",
)

string_flag = rule(
    implementation = _impl,
    build_setting = config.string(flag = True),
    doc = "A string-typed build setting that can be set on the command line.",
)
