"""Runs commands with the machine's CUDA toolkit invisible; call it under `unshare -m`.

    unshare -m python3 hide_cuda.py OUT_DIR COMMANDS_JSON
    unshare -m python3 hide_cuda.py --exec COMMAND [ARG...]

Binds an empty directory over every /usr/local/cuda* directory and /dev/null over
every `nvcc` on $PATH (in this private mount namespace only), checks that no nvcc
is left, then runs each command (a JSON list of argv lists) in turn, writing
N.out, N.err and N.rc into OUT_DIR; with --exec it becomes the one command (its
output streams, its exit status is the script's: `tools/dev upstream` builds
core c10 this way). Exits 3 when the toolkit could not be hidden.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SEARCHED = ["/usr/local/bin", "/usr/bin", "/bin"]


def hide() -> list[str]:
    """Hides the toolkit; returns what is still visible (empty on success)."""
    empty = tempfile.mkdtemp(prefix="no-cuda-")
    for path in sorted(glob.glob("/usr/local/cuda*")):
        if os.path.isdir(path) and not os.path.islink(path):
            subprocess.run(["mount", "--bind", empty, path], check=True)
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d] + SEARCHED
    for d in dict.fromkeys(dirs):
        nvcc = Path(d) / "nvcc"
        if nvcc.exists():
            subprocess.run(["mount", "--bind", "/dev/null", str(nvcc)], check=True)
    left = glob.glob("/usr/local/cuda*/bin/nvcc")
    found = shutil.which("nvcc")
    return left + ([found] if found else [])


def main(argv: list[str]) -> int:
    if argv[:1] == ["--exec"]:
        left = hide()
        if left or len(argv) < 2:
            print(f"hide_cuda: still visible: {left}" if left else "hide_cuda: no command",
                  file=sys.stderr)  # fmt: skip
            return 3
        os.execvp(argv[1], argv[1:])
    out = Path(argv[0])
    commands = json.loads(argv[1])
    left = hide()
    if left:
        print(f"hide_cuda: still visible: {left}", file=sys.stderr)
        return 3
    for n, command in enumerate(commands):
        proc = subprocess.run(command, capture_output=True, text=True, check=False)
        (out / f"{n}.out").write_text(proc.stdout)
        (out / f"{n}.err").write_text(proc.stderr)
        (out / f"{n}.rc").write_text(str(proc.returncode))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
