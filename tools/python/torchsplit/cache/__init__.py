"""``torchsplit cache``: the project's HTTP remote cache (nginx WebDAV on loopback) and
hit-rate statistics from Bazel's output and execution logs."""

from torchsplit.cache.server import CacheServer
from torchsplit.cache.stats import CacheStats, parse_summary

__all__ = ["CacheServer", "CacheStats", "parse_summary"]
