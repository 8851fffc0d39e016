"""torch_core, torch_emu and torch_cuda as a user gets them: release wheels, pip-installed.

Checks the wheels themselves (names, tags, RECORD, metadata, content
manifests, manylinux, RUNPATHs, exported symbols) and then uses the
installed packages from outside the checkout (autoload, the README's code,
a slice of the op suite, torch_cuda without a driver).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from installed import WHEEL_NAME, Venv, requirement_pins

from builds import REPO

pytestmark = pytest.mark.bazel

MANIFESTS = Path(__file__).absolute().parent / "manifests"
# What torch_core's files must never name (it is the CPU-only core).
CUDA_WORDS = re.compile(rb"cuda|cudart|nvrtc|nccl|cublas", re.IGNORECASE)
# The CPU BLAS torch_core's wheel bundles beside libtorch_core.so (@cpu_blas).
BLAS_SONAME = "libscipy_openblas.so"
# External libraries a backend may need that auditwheel cannot see in its wheel:
# they come from the wheels it requires (torch_core, nvidia-cuda-runtime).
FROM_REQUIRED_WHEELS = {"libtorch_core.so", BLAS_SONAME, "libcudart.so.13"}
# ROCm ships no pip wheels: torch_hip's wheel (built by tools/dev wheels where
# hipcc is) needs the machine's HIP runtime and what that links (docs/torch_hip.md).
FROM_THE_MACHINE = {"torch_hip": "libamdhip64.so"}


def _machine_closure(dist: str, external: set[str]) -> set[str]:
    """The machine's runtime library of `dist` and the sonames it needs (ldd)."""
    runtime = FROM_THE_MACHINE.get(dist)
    if runtime is None:
        return set()
    mine = {lib for lib in external if lib.startswith(runtime)}
    assert mine, external
    cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    path = next(
        line.split(" => ")[1] for line in cache.splitlines() if line.strip().startswith(runtime)
    )
    needed = subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout
    return mine | {line.split()[0] for line in needed.splitlines() if "=>" in line}


def _manylinux_glibc(tag: str) -> tuple[int, int]:
    match = re.match(r"manylinux_(\d+)_(\d+)_x86_64$", tag)
    assert match, tag
    return int(match.group(1)), int(match.group(2))


def _dist_info(whl: zipfile.ZipFile, dist: str, name: str) -> str:
    return whl.read(f"{dist}-0.1.0.dist-info/{name}").decode()


def test_wheel_names_tags_and_record(wheels: dict[str, Path]) -> None:
    py_tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    for dist, path in wheels.items():
        match = WHEEL_NAME.match(path.name)
        assert match and match.group("py") == py_tag, path.name
        with zipfile.ZipFile(path) as whl:
            wheel = _dist_info(whl, dist, "WHEEL")
            assert f"Tag: {py_tag}-{py_tag}-{match.group('platform')}" in wheel
            assert "Root-Is-Purelib: false" in wheel
            record = _dist_info(whl, dist, "RECORD").splitlines()
            listed = {}
            for line in record:
                name, digest, size = line.rsplit(",", 2)
                listed[name] = (digest, size)
            assert set(listed) == set(whl.namelist()), path.name
            for name, (digest, size) in listed.items():
                if name.endswith("/RECORD"):
                    assert digest == size == ""
                    continue
                payload = whl.read(name)
                expected = base64.urlsafe_b64encode(hashlib.sha256(payload).digest()).rstrip(b"=")
                assert digest == "sha256=" + expected.decode(), name
                assert int(size) == len(payload), name


@pytest.mark.parametrize("dist", sorted(p.stem for p in MANIFESTS.glob("*.txt")))
def test_wheel_contents_match_the_manifest(wheels: dict[str, Path], dist: str) -> None:
    """A file appearing in or vanishing from a wheel fails here: update manifests/ on purpose."""
    if dist not in wheels:
        pytest.skip(f"no {dist} wheel on this machine (CUDA not buildable)")
    with zipfile.ZipFile(wheels[dist]) as whl:
        names = sorted(whl.namelist())
    expected = (MANIFESTS / f"{dist}.txt").read_text().split()
    assert names == sorted(expected), (
        f"added: {sorted(set(names) - set(expected))}, gone: {sorted(set(expected) - set(names))}"
    )


def test_backend_metadata(wheels: dict[str, Path]) -> None:
    pins = requirement_pins()
    for dist, path in wheels.items():
        with zipfile.ZipFile(path) as whl:
            metadata = _dist_info(whl, dist, "METADATA")
            requires = re.findall(r"^Requires-Dist: (.*)$", metadata, re.MULTILINE)
            if dist == "torch_core":
                assert requires == ["numpy>=1.26"]
                assert f"{dist}-0.1.0.dist-info/entry_points.txt" not in whl.namelist()
                continue
            assert "torch_core==0.1.0" in requires
            entry_points = _dist_info(whl, dist, "entry_points.txt")
            short = dist.removeprefix("torch_")
            assert entry_points.split() == ["[torch_core.backends]", short, "=", dist]
        if dist == "torch_cuda":
            nvidia = ["nvidia-cuda-runtime", "nvidia-cuda-nvrtc", "nvidia-nccl-cu13"]
            assert sorted(requires[1:]) == sorted(f"{n}=={pins[n]}" for n in nvidia)


def test_auditwheel_platform_tags(wheels: dict[str, Path]) -> None:
    """Each wheel's symbol versions allow its tag; external libraries come from required wheels."""
    for dist, path in wheels.items():
        proc = subprocess.run(
            [sys.executable, "-m", "auditwheel", "show", "--json", str(path)],
            capture_output=True,
            text=True,
            check=True,
        )
        report = json.loads(proc.stdout)
        platform = WHEEL_NAME.match(path.name).group("platform")
        assert _manylinux_glibc(report["sym_tag"]) <= _manylinux_glibc(platform), report["sym_tag"]
        external = set(report["external_libs"])
        if dist == "torch_core":
            assert external == set(), external
            assert report["overall_tag"] == report["sym_tag"]
        else:
            assert external <= FROM_REQUIRED_WHEELS | _machine_closure(dist, external), external
            assert "libtorch_core.so" in external


def test_torch_core_names_no_cuda(wheels: dict[str, Path]) -> None:
    with zipfile.ZipFile(wheels["torch_core"]) as whl:
        for name in whl.namelist():
            assert not CUDA_WORDS.search(name.encode()), name
            hit = CUDA_WORDS.search(whl.read(name))
            assert hit is None, f"{name} names {hit.group(0)!r}"


def _readelf(*args: str) -> str:
    return subprocess.run(["readelf", *args], capture_output=True, text=True, check=True).stdout


def test_installed_runpaths_stay_inside_site_packages(venv: Venv) -> None:
    objects = [
        p
        for d in sorted(p.stem for p in MANIFESTS.glob("*.txt"))
        for p in (venv.site_packages / d).rglob("*.so")
    ]
    assert len(objects) >= 3
    for obj in objects:
        dynamic = _readelf("-d", str(obj))
        for runpath in re.findall(r"R(?:UN)?PATH\)\s+Library r(?:un)?path: \[(.*)\]", dynamic):
            for entry in runpath.split(":"):
                assert entry.split("/")[0] == "$ORIGIN", f"{obj.name}: RUNPATH entry {entry}"
                resolved = Path(entry.replace("$ORIGIN", str(obj.parent))).resolve()
                assert venv.site_packages in resolved.parents, f"{obj.name}: {entry}"
        ldd = subprocess.run(["ldd", str(obj)], capture_output=True, text=True, check=True).stdout
        assert "not found" not in ldd, f"{obj.name}:\n{ldd}"
        for line in ldd.splitlines():
            if any(lib in line for lib in ("libtorch_core.so", BLAS_SONAME, "libcudart")):
                assert str(venv.site_packages) in line, f"{obj.name} loads {line.strip()}"


def test_the_bundled_blas_is_found_through_origin(venv: Venv) -> None:
    """libtorch_core.so finds the BLAS beside it ($ORIGIN), and matmul runs on it."""
    lib = venv.site_packages / "torch_core" / "lib"
    dynamic = _readelf("-d", str(lib / "libtorch_core.so"))
    assert f"Shared library: [{BLAS_SONAME}]" in dynamic
    assert "Library runpath: [$ORIGIN]" in dynamic
    assert f"Library soname: [{BLAS_SONAME}]" in _readelf("-d", str(lib / BLAS_SONAME))
    code = (
        "import numpy as np, torch_core as tc\n"
        "a = np.random.default_rng(0).random((300, 200), dtype=np.float32)\n"
        "tc.set_num_threads(1)\n"
        "np.testing.assert_allclose((tc.tensor(a) @ tc.tensor(a.T)).numpy(), a @ a.T, rtol=1e-5)\n"
        "c = tc.config()\n"
        "print(c['blas'], c['blas_enabled'], c['num_threads'], c['cpu_capability'])\n"
        "maps = open('/proc/self/maps').read().splitlines()\n"
        "print([line.split()[-1] for line in maps if 'openblas' in line][0])\n"
    )
    proc = venv.run(code)
    assert proc.returncode == 0, proc.stderr
    described, loaded = proc.stdout.splitlines()
    blas, enabled, threads, capability = described.rsplit(" ", 3)
    assert blas.startswith("scipy-openblas32 ") and enabled == "True" and threads == "1"
    assert capability in ("default", "avx2", "avx512")
    assert Path(loaded) == lib / BLAS_SONAME


def test_cuda_extension_exports_only_its_init(venv: Venv) -> None:
    ext = venv.site_packages / "torch_cuda" / "_CUDAC.so"
    if not ext.exists():
        pytest.skip("no torch_cuda wheel on this machine")
    rows = [line.split() for line in _readelf("--dyn-syms", "-W", str(ext)).splitlines()]
    symbols = [r for r in rows if len(r) >= 8 and r[0].rstrip(":").isdigit()]
    exported = [r[7] for r in symbols if r[6] != "UND" and r[4] in ("GLOBAL", "WEAK")]
    assert exported == ["PyInit__CUDAC"]
    # Nothing is left undefined but what a DT_NEEDED library or the interpreter provides.
    provided = set()
    for lib in ("torch_core/lib/libtorch_core.so", "nvidia/cu13/lib/libcudart.so.13"):
        for line in _readelf("--dyn-syms", "-W", str(venv.site_packages / lib)).splitlines():
            fields = line.split()
            if len(fields) >= 8 and fields[6] != "UND":
                provided.add(fields[7].split("@")[0])
    for r in symbols:
        name = r[7]
        if r[6] != "UND" or "@" in name or r[4] == "WEAK":
            continue
        assert name in provided or re.match(r"_?Py", name), f"_CUDAC.so leaves {name} undefined"


def test_autoload_finds_the_installed_backends(venv: Venv, wheels: dict[str, Path]) -> None:
    code = (
        "import torch_core, sys; "
        "print(torch_core.__file__); print(sorted(torch_core.registered_device_types()))"
    )
    proc = venv.run(code)
    assert proc.returncode == 0, proc.stderr
    location, types = proc.stdout.splitlines()
    assert Path(location).is_relative_to(venv.site_packages)
    expected = ["cpu", "emu"] + (["cuda"] if "torch_cuda" in wheels else [])
    assert eval(types) == sorted(expected)
    proc = venv.run(code, env={"TORCH_CORE_NO_AUTOLOAD": "1"})
    assert proc.returncode == 0, proc.stderr
    assert eval(proc.stdout.splitlines()[1]) == ["cpu"]


def _python_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", markdown, re.MULTILINE | re.DOTALL)


def test_readme_python_blocks_run_against_the_installed_wheels(venv: Venv) -> None:
    blocks = _python_blocks((REPO / "README.md").read_text())
    assert len(blocks) >= 2
    for block in blocks:
        proc = venv.run(block)
        assert proc.returncode == 0, f"README block failed:\n{block}\n{proc.stderr}"
    example = venv.run(blocks[0])
    assert example.stdout.startswith("tensor([[0.5"), example.stdout


OP_SLICE = """
import numpy as np
import torch_core as tc

rng = np.random.default_rng(0)
a, b = rng.standard_normal((64, 48)), rng.standard_normal((64, 48))
m = rng.standard_normal((48, 32))
for device in ("cpu", "emu:0"):
    x, y = tc.tensor(a, device=device), tc.tensor(b, device=device)
    checks = {
        "add": ((x + y), a + b),
        "mul": ((x * y), a * b),
        "exp": (x.exp(), np.exp(a)),
        "relu": (x.relu(), np.maximum(a, 0)),
        "sum": (x.sum(1), a.sum(1)),
        "softmax": (x.softmax(1), np.exp(a) / np.exp(a).sum(1, keepdims=True)),
        "matmul": ((x @ tc.tensor(m, device=device)), a @ m),
    }
    for op, (got, want) in checks.items():
        np.testing.assert_allclose(got.to("cpu").numpy(), want, rtol=1e-6, atol=1e-9, err_msg=op)
    print(device, "ok", len(checks))
"""


def test_op_suite_slice_on_cpu_and_emu(venv: Venv) -> None:
    proc = venv.run(OP_SLICE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["cpu", "ok", "7", "emu:0", "ok", "7"]


def test_installed_cuda_backend_without_a_driver(venv: Venv, wheels: dict[str, Path]) -> None:
    if "torch_cuda" not in wheels:
        pytest.skip("no torch_cuda wheel on this machine")
    proc = venv.run(
        "import torch_cuda; print(torch_cuda.is_available()); print(torch_cuda.device_count()); "
        "print(torch_cuda._CUDAC._unavailable_reason())"
    )
    assert proc.returncode == 0, proc.stderr
    available, count, reason = proc.stdout.splitlines()
    if available == "True":
        pytest.skip("this machine has a CUDA device")
    assert (available, count) == ("False", "0")
    assert "driver" in reason.lower(), reason


NVIDIA_WHEELS = """
import numpy as np, os, tempfile
os.environ["TORCH_CORE_JIT_CACHE"] = tempfile.mkdtemp()
import torch_core as tc
from torch_core import jit
from torch_cuda import jit as cuda_jit
from torch_cuda.distributed import nccl_version

x = tc.tensor(np.ones(3, dtype=np.float32))
graph = jit.trace(lambda a, b: (a * b).relu().exp(), [x, x], "float32")
compiled = cuda_jit.compile_graph(graph, "sm_90")
print(".".join(map(str, cuda_jit.nvrtc_version())), compiled.cubin[:4] == b"\\x7fELF")
print(".".join(map(str, nccl_version())))
"""


def test_installed_cuda_backend_uses_the_nvidia_wheels(venv: Venv, wheels: dict[str, Path]) -> None:
    """NVRTC compiles with the header in torch_core's wheel; NCCL loads from its wheel."""
    if "torch_cuda" not in wheels:
        pytest.skip("no torch_cuda wheel on this machine")
    proc = venv.run(NVIDIA_WHEELS)
    assert proc.returncode == 0, proc.stderr
    nvrtc, nccl = proc.stdout.splitlines()
    pins = requirement_pins()
    assert nvrtc.split()[0] == ".".join(pins["nvidia-cuda-nvrtc"].split(".")[:2])
    assert nvrtc.split()[1] == "True"
    assert nccl == pins["nvidia-nccl-cu13"]
