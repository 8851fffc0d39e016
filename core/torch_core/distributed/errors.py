"""Errors of torch_core.distributed: every failure names the collective and the ranks involved."""

from __future__ import annotations


class DistError(RuntimeError):
    """A collective or the store failed (a peer died, data did not match, ...)."""


class DistTimeoutError(DistError, TimeoutError):
    """A peer did not arrive, answer or send within the group's timeout."""


class DistBackendError(DistError):
    """No backend fits the request (unknown name, unsupported device type)."""
