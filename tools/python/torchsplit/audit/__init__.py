"""``torchsplit audit``: check a Bazel graph against the layering policy, and the
mutation harness that proves each enforcement layer can fail."""

from torchsplit.audit.auditor import Auditor, AuditResult
from torchsplit.audit.policy import DEFAULT_POLICY, Policy, load_policy

__all__ = ["DEFAULT_POLICY", "AuditResult", "Auditor", "Policy", "load_policy"]
