"""Offline stand-in for rules_python's python/defs.bzl: forwards to the native rules."""

def py_library(**kwargs):
    """Forwards to native.py_library."""
    native.py_library(**kwargs)

def py_binary(**kwargs):
    """Forwards to native.py_binary."""
    native.py_binary(**kwargs)

def py_test(**kwargs):
    """Forwards to native.py_test."""
    native.py_test(**kwargs)

def py_runtime(**kwargs):
    """Forwards to native.py_runtime."""
    native.py_runtime(**kwargs)
