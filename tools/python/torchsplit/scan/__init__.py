"""``torchsplit scan``: find the device couplings left inside files that stay in core."""

from torchsplit.scan.scanner import CATEGORIES, Finding, MovedFiles, scan_paths

__all__ = ["CATEGORIES", "Finding", "MovedFiles", "scan_paths"]
