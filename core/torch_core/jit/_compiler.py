"""The host C++ compiler: finding it and running it on one generated source."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

COMPILER_ENV = "TORCH_CORE_JIT_CXX"
# Flags are part of the cache key. -ffp-contract=off: no fused multiply-add,
# so fused results round exactly as eager's separate ops do.
FLAGS = ("-O3", "-std=c++17", "-shared", "-fPIC", "-fvisibility=hidden", "-ffp-contract=off")
COMPILE_TIMEOUT_S = 300


class CompilerUnavailable(RuntimeError):
    """No usable host compiler: fusion falls back to eager mode."""


class JitCompileError(RuntimeError):
    """The compiler rejected generated code: a bug in the code generator."""


@dataclass(frozen=True)
class HostCompiler:
    path: str
    # Resolved path plus the compiler's --version banner: a compiler upgrade
    # changes the cache key.
    identity: str


def find_host_compiler() -> HostCompiler:
    """$TORCH_CORE_JIT_CXX, else $CXX, else c++, g++ or clang++ on PATH.

    A compiler named by either variable is authoritative: when it is not an
    executable, there is no compiler (PATH is not searched instead).
    """
    for variable in (COMPILER_ENV, "CXX"):
        named = os.environ.get(variable, "")
        if named:
            resolved = shutil.which(named)
            if resolved is None:
                raise CompilerUnavailable(f"${variable}={named!r} is not an executable compiler")
            return _identify(str(Path(resolved).resolve()))
    for name in ("c++", "g++", "clang++"):
        resolved = shutil.which(name)
        if resolved is not None:
            return _identify(str(Path(resolved).resolve()))
    raise CompilerUnavailable(f"no C++ compiler found (set ${COMPILER_ENV}, or put c++ on PATH)")


@functools.lru_cache(maxsize=16)
def _identify(path: str) -> HostCompiler:
    try:
        proc = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except OSError as error:
        raise CompilerUnavailable(f"cannot run the compiler {path}: {error}") from error
    if proc.returncode != 0:
        raise CompilerUnavailable(f"{path} --version failed: {proc.stderr.strip()[:500]}")
    banner = proc.stdout.strip().splitlines()[0] if proc.stdout.strip() else ""
    return HostCompiler(path=path, identity=f"{path}\n{banner}")


def compile_shared(
    compiler: HostCompiler, source: Path, output: Path, include_dirs: list[Path]
) -> None:
    """Compiles one source into a shared object; JitCompileError carries the compiler's message."""
    argv = [
        compiler.path,
        *FLAGS,
        *(f"-I{d}" for d in include_dirs),
        "-o",
        str(output),
        str(source),
    ]
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, check=False
        )
    except OSError as error:
        raise CompilerUnavailable(f"cannot run the compiler {compiler.path}: {error}") from error
    except subprocess.TimeoutExpired as error:
        raise JitCompileError(f"compiling {source} took over {COMPILE_TIMEOUT_S}s") from error
    if proc.returncode != 0:
        raise JitCompileError(
            f"{compiler.path} failed on {source} (exit {proc.returncode}):\n{proc.stderr[-4000:]}"
        )
