"""``torchsplit audit``: check a Bazel graph against the layering policy, and the
mutation harness that proves each enforcement layer can fail.

The names below load on first use: the run-time guard (runtime.py), installed in every
test process, imports this package and needs none of the audit's heavier modules.
"""

from __future__ import annotations

from importlib import import_module

_EXPORTS = {
    "DEFAULT_POLICY": "torchsplit.audit.policy",
    "Policy": "torchsplit.audit.policy",
    "load_policy": "torchsplit.audit.policy",
    "Auditor": "torchsplit.audit.auditor",
    "AuditResult": "torchsplit.audit.auditor",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'torchsplit.audit' has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
