"""Offline stand-in for rules_java's java/defs.bzl: forwards to Bazel 4.2.3's native Java rules."""

def java_binary(**kwargs):
    """Forwards to native.java_binary."""
    native.java_binary(**kwargs)

def java_import(**kwargs):
    """Forwards to native.java_import."""
    native.java_import(**kwargs)

def java_library(**kwargs):
    """Forwards to native.java_library."""
    native.java_library(**kwargs)

def java_test(**kwargs):
    """Forwards to native.java_test."""
    native.java_test(**kwargs)

def java_toolchain(**kwargs):
    """Forwards to native.java_toolchain."""
    native.java_toolchain(**kwargs)

def java_proto_library(**kwargs):
    """Forwards to native.java_proto_library."""
    native.java_proto_library(**kwargs)

def java_runtime(**kwargs):
    """Forwards to native.java_runtime."""
    native.java_runtime(**kwargs)
