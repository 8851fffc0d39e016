"""Path globs as regular expressions, the way Bazel's glob() and .gitignore read them."""

from __future__ import annotations

import re


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """``**`` matches across ``/`` (``**/`` also matches nothing), ``*``/``?`` do not.

    The result matches a whole path (``re.match`` or ``fullmatch`` alike).
    """
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")
