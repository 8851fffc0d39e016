"""Discovery of device backends through the ``torch_core.backends`` entry point group.

An installed backend wheel declares the entry point in its dist-info; a
development build has the same dist-info beside the built extension (Bazel's
``:dev_dist_info`` of each backend), so a source tree whose package
directories are on sys.path autoloads its backends too.
"""

from __future__ import annotations

import os
from importlib import metadata

ENTRY_POINT_GROUP = "torch_core.backends"
DISABLE_ENV = "TORCH_CORE_NO_AUTOLOAD"

_loaded: dict[str, object] = {}


def load_backends() -> dict[str, object]:
    """Imports every backend on sys.path once and returns them by entry point name.

    Set ``TORCH_CORE_NO_AUTOLOAD=1`` to skip discovery; backends can still be
    imported by hand. A backend that fails to import raises ImportError naming
    the entry point, since a half-registered device is worse than none.
    """
    if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
        return dict(_loaded)
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry_point.name in _loaded:
            continue
        try:
            _loaded[entry_point.name] = entry_point.load()
        except Exception as error:
            raise ImportError(
                f"torch_core backend '{entry_point.name}' ({entry_point.value}) failed to load: "
                f"{error}; set {DISABLE_ENV}=1 to start without it"
            ) from error
    return dict(_loaded)
