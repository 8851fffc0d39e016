"""Offline stand-in for rules_cc's cc/defs.bzl: forwards to Bazel 4.2.3's native C++ rules."""

def cc_binary(**kwargs):
    """Forwards to native.cc_binary."""
    native.cc_binary(**kwargs)

def cc_import(**kwargs):
    """Forwards to native.cc_import."""
    native.cc_import(**kwargs)

def cc_library(**kwargs):
    """Forwards to native.cc_library."""
    native.cc_library(**kwargs)

def cc_test(**kwargs):
    """Forwards to native.cc_test."""
    native.cc_test(**kwargs)

def cc_toolchain(**kwargs):
    """Forwards to native.cc_toolchain."""
    native.cc_toolchain(**kwargs)

def objc_library(**kwargs):
    """Forwards to native.objc_library."""
    native.objc_library(**kwargs)

def cc_proto_library(**kwargs):
    """Forwards to native.cc_proto_library."""
    native.cc_proto_library(**kwargs)

def cc_toolchain_suite(**kwargs):
    """Forwards to native.cc_toolchain_suite."""
    native.cc_toolchain_suite(**kwargs)
