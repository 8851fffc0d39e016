"""Runs commands with the machine's CUDA invisible; call it under `unshare -m`.

    unshare -m python3 hide_cuda.py OUT_DIR COMMANDS_JSON
    unshare -m python3 hide_cuda.py --exec COMMAND [ARG...]

In this private mount namespace only, it binds an empty directory over every
/usr/local/cuda* directory and /dev/null over every `nvcc` on $PATH. The
loader's cache (/etc/ld.so.cache) would still list the hidden toolkit's
libraries and send the loader to them first, so the cache is rebuilt
(`ldconfig -X -C`, from the same configuration, now seeing empty directories)
and bound over the real one; a CUDA library the rebuilt cache still lists
(a driver's libcuda, say, or a toolkit installed elsewhere) gets /dev/null
bound over it and the cache is rebuilt once more. It then checks that no
nvcc and no cached CUDA library is left, and runs each command in turn
without LD_LIBRARY_PATH, writing N.out, N.err and N.rc into OUT_DIR. A
command is an argv list, or {"argv": [...], "env": {...}, "cwd": "..."} (env
replaces the environment); with --exec it becomes the one command (its output
streams, its exit status is the script's: `tools/dev upstream` builds core c10
this way). Exits 3 when CUDA could not be hidden.

Tests call it through run_hidden() (``from bazel.hide_cuda import run_hidden``).
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

SEARCHED = ["/usr/local/bin", "/usr/bin", "/bin"]
# The libraries a CUDA program loads by soname: runtime, driver, and what a
# toolkit or NVIDIA's wheels ship beside them.
CUDA_LIBRARY = re.compile(r"^\s*(libcuda|libcudart|libnvrtc|libnccl|libcupti|libnvidia-ml)\.so")
LOADER_CACHE = "/etc/ld.so.cache"


def _bind(source: str, target: str) -> None:
    subprocess.run(["mount", "--bind", source, target], check=True)


def cached_cuda_libraries() -> dict[str, str]:
    """soname line -> path, for each CUDA library the loader's cache lists."""
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        if CUDA_LIBRARY.match(line) and "=>" in line:
            found[line.strip()] = line.rsplit("=>", 1)[1].strip()
    return found


def _rebuild_loader_cache(workdir: str, generation: int) -> None:
    cache = os.path.join(workdir, f"ld.so.cache.{generation}")
    subprocess.run(["ldconfig", "-X", "-C", cache], check=True)
    _bind(cache, LOADER_CACHE)


def hide() -> list[str]:
    """Hides CUDA; returns what is still visible (empty on success)."""
    empty = tempfile.mkdtemp(prefix="no-cuda-")
    workdir = tempfile.mkdtemp(prefix="hide-cuda-")
    for path in sorted(glob.glob("/usr/local/cuda*")):
        if os.path.isdir(path) and not os.path.islink(path):
            _bind(empty, path)
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d] + SEARCHED
    for d in dict.fromkeys(dirs):
        nvcc = Path(d) / "nvcc"
        if nvcc.exists():
            _bind("/dev/null", str(nvcc))
    if os.path.exists(LOADER_CACHE):
        _rebuild_loader_cache(workdir, 1)
        left_in_cache = cached_cuda_libraries()
        for path in sorted(set(left_in_cache.values())):
            if os.path.exists(path):
                _bind("/dev/null", path)
        if left_in_cache:
            _rebuild_loader_cache(workdir, 2)
    left = glob.glob("/usr/local/cuda*/bin/nvcc")
    found = shutil.which("nvcc")
    return left + ([found] if found else []) + sorted(cached_cuda_libraries())


@dataclass(frozen=True)
class Ran:
    """What one command printed and returned with CUDA hidden."""

    returncode: int
    stdout: str
    stderr: str


def unshare_works() -> str | None:
    """Why CUDA cannot be hidden here (no unshare, no permission), or None."""
    if shutil.which("unshare") is None:
        return "no unshare command"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return f"unshare -m is not permitted here: {probe.stderr.strip()}"
    return None


def run_hidden(
    commands: list[list[str] | dict[str, object]],
    out: Path,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 3600,
) -> list[Ran]:
    """Runs `commands` (see the module's docstring) with CUDA hidden; fails if it could not be."""
    proc = subprocess.run(
        ["unshare", "-m", sys.executable, __file__, str(out), json.dumps(commands)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise AssertionError(f"hide_cuda exited {proc.returncode}: {proc.stderr}")
    return [
        Ran(
            int((out / f"{n}.rc").read_text()),
            (out / f"{n}.out").read_text(),
            (out / f"{n}.err").read_text(),
        )
        for n in range(len(commands))
    ]


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
        spec = command if isinstance(command, dict) else {"argv": command}
        env = dict(spec.get("env", os.environ))
        env.pop("LD_LIBRARY_PATH", None)
        proc = subprocess.run(
            spec["argv"],
            cwd=spec.get("cwd"),
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        (out / f"{n}.out").write_text(proc.stdout)
        (out / f"{n}.err").write_text(proc.stderr)
        (out / f"{n}.rc").write_text(str(proc.returncode))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
