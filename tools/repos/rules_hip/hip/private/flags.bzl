"""Build-setting rules for the //hip:enable and //hip:archs flags (no bazel_skylib offline)."""

BoolFlagInfo = provider(doc = "Value of a boolean build setting.", fields = ["value"])
StringFlagInfo = provider(doc = "Value of a string build setting.", fields = ["value"])

def _bool_flag_impl(ctx):
    return [BoolFlagInfo(value = ctx.build_setting_value)]

bool_flag = rule(
    implementation = _bool_flag_impl,
    build_setting = config.bool(flag = True),
    doc = "A boolean command-line flag, e.g. --@rules_hip//hip:enable=false.",
)

def _string_flag_impl(ctx):
    return [StringFlagInfo(value = ctx.build_setting_value)]

string_flag = rule(
    implementation = _string_flag_impl,
    build_setting = config.string(flag = True),
    doc = "A string command-line flag, e.g. --@rules_hip//hip:archs=gfx90a.",
)
