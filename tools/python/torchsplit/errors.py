"""Errors a user can act on: each names the file, the line and what was expected."""

from __future__ import annotations


class TorchsplitError(Exception):
    """An error caused by the input (file, config, arguments), reported without a traceback."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.path = path
        self.line = line
        self.detail = message
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(f"{where}{message}")
