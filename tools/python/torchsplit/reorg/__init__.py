"""``torchsplit reorg``: read a PyTorch-style ``build_variables.bzl``, place every source
in a core or backend target, emit the BUILD overlay and check it against a checkout."""

from torchsplit.reorg.classify import Classification, classify
from torchsplit.reorg.rules import RuleSet, load_rules
from torchsplit.reorg.starlark_eval import Evaluation, evaluate

__all__ = ["Classification", "Evaluation", "RuleSet", "classify", "evaluate", "load_rules"]
