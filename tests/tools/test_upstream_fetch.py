"""`torchsplit upstream fetch` without the network: apt is a recording fake that writes a
small tarball, pinned by its own hash. The deb-src entry, the check, the unpack and the
idempotence are the real code."""

from __future__ import annotations

import hashlib
import io
import subprocess
import tarfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from torchsplit.cli import main
from torchsplit.errors import TorchsplitError
from torchsplit.upstream import fetch
from torchsplit.upstream.versions import PINS, Pin

DEBIAN = """Types: deb
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""


def _tarball(top: str = "pytorch-v9.9.9") -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:xz") as tar:
        for name, text in {
            f"{top}/build_variables.bzl": b"libtorch_core_sources = []\n",
            f"{top}/c10/core/Device.cpp": b"// device\n",
        }.items():
            info = tarfile.TarInfo(name)
            info.size = len(text)
            tar.addfile(info, io.BytesIO(text))
    return out.getvalue()


def _pin(data: bytes) -> Pin:
    return Pin(
        version="9.9.9",
        package="pytorch",
        debian_version="9.9.9+dfsg-1",
        suite="trixie",
        tarball="pytorch_9.9.9+dfsg.orig.tar.xz",
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
    )


class FakeApt:
    """Records every command; `apt-get source` writes the tarball (and fails like a
    mirror missing the .debian.tar.xz when asked to); tar runs for real."""

    def __init__(self, data: bytes, pin: Pin, exit_code: int = 0):
        self.data, self.pin, self.exit_code = data, pin, exit_code
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str], cwd: Path | None) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        if argv[0] == "apt-get" and "source" in argv:
            assert cwd is not None and argv[-1] == self.pin.apt_spec
            (cwd / self.pin.tarball).write_bytes(self.data)
            return subprocess.CompletedProcess(argv, self.exit_code, "", "404 debian.tar.xz")
        if argv[0] == "apt-get":
            return subprocess.CompletedProcess(argv, 0, "", "")
        return fetch.run_command(argv, cwd)


@pytest.fixture
def apt_dir(tmp_path: Path) -> Path:
    d = tmp_path / "etc-apt"
    (d / "sources.list.d").mkdir(parents=True)
    (d / "sources.list.d" / "debian.sources").write_text(DEBIAN)
    return d


def test_a_fresh_machine_gets_the_entry_the_tarball_and_the_tree(tmp_path, apt_dir):
    data = _tarball()
    pin = _pin(data)
    apt = FakeApt(data, pin, exit_code=100)
    said: list[str] = []
    tree = fetch.fetch(pin, root=tmp_path / "cache", apt_dir=apt_dir, say=said.append, run=apt)
    assert tree == tmp_path / "cache" / "9.9.9"
    assert (tree / "c10/core/Device.cpp").read_text() == "// device\n"
    # The entry uses the machine's own mirror and key, not its security archive.
    entry = (apt_dir / "sources.list.d" / fetch.SOURCES_NAME).read_text()
    assert "Types: deb-src\nURIs: http://mirror.example/debian\nSuites: trixie\n" in entry
    assert "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" in entry
    update = next(c for c in apt.calls if "update" in c)
    assert "DPkg::Lock::Timeout=600" in update and "APT::Get::List-Cleanup=0" in update
    source = next(c for c in apt.calls if "source" in c)
    assert source[-3:] == ["--download-only", "-qq", "pytorch=9.9.9+dfsg-1"]
    assert any("going on" in s for s in said)  # apt's non-zero exit was explained
    # Nothing but the tree, its lock file and its stamp: no temporaries.
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [".9.9.9.lock", "9.9.9"]
    assert fetch.fetched(pin, tmp_path / "cache")
    # Again: nothing runs.
    apt.calls.clear()
    fetch.fetch(pin, root=tmp_path / "cache", apt_dir=apt_dir, say=said.append, run=apt)
    assert apt.calls == [] and said[-1].startswith("PyTorch 9.9.9 already fetched")


def test_an_existing_deb_src_entry_is_used_as_it_is(tmp_path, apt_dir):
    (apt_dir / "sources.list").write_text(
        "deb-src [signed-by=/k.gpg] http://deb.debian.org/debian trixie main  # ok\n"
    )
    data = _tarball()
    pin = _pin(data)
    apt = FakeApt(data, pin)
    fetch.fetch(pin, root=tmp_path / "c", apt_dir=apt_dir, run=apt)
    assert not (apt_dir / "sources.list.d" / fetch.SOURCES_NAME).exists()
    assert not [c for c in apt.calls if "update" in c]


def test_a_disabled_stanza_does_not_count():
    entries = list(
        fetch._deb822(
            Path("x.sources"),
            "Types: deb-src\nURIs: http://m/debian\nSuites: trixie\nComponents: main\n"
            "Enabled: no\n",
        )
    )
    assert fetch.find_deb_src(entries, "trixie") is None


def test_a_wrong_hash_is_an_error_and_leaves_nothing(tmp_path, apt_dir):
    data = _tarball()
    pin = _pin(data)
    bad = Pin(**{**pin.__dict__, "sha256": "0" * 64})
    with pytest.raises(TorchsplitError, match="does not match the pin"):
        fetch.fetch(bad, root=tmp_path / "c", apt_dir=apt_dir, run=FakeApt(data, bad))
    assert [p.name for p in (tmp_path / "c").iterdir()] == [".9.9.9.lock"]
    short = Pin(**{**pin.__dict__, "size": pin.size + 1})
    with pytest.raises(TorchsplitError, match="bytes, the pin says"):
        fetch.fetch(short, root=tmp_path / "c", apt_dir=apt_dir, run=FakeApt(data, short))


def test_a_killed_fetch_is_cleaned_up_by_the_next(tmp_path, apt_dir):
    data = _tarball()
    pin = _pin(data)
    root = tmp_path / "c"
    (root / ".9.9.9.abcd.partial" / "half").mkdir(parents=True)
    (root / ".9.9.9.efgh.download").mkdir()
    (root / "9.9.9").mkdir()  # a tree without a stamp: unpacked by a killed run
    (root / "9.9.9" / "leftover").write_text("x")
    fetch.fetch(pin, root=root, apt_dir=apt_dir, run=FakeApt(data, pin))
    assert sorted(p.name for p in root.iterdir()) == [".9.9.9.lock", "9.9.9"]
    assert not (root / "9.9.9" / "leftover").exists()


def test_a_local_tarball_is_checked_like_a_download(tmp_path, apt_dir):
    data = _tarball()
    pin = _pin(data)
    local = tmp_path / pin.tarball
    local.write_bytes(data)
    apt = FakeApt(data, pin)
    tree = fetch.fetch(pin, root=tmp_path / "c", apt_dir=apt_dir, tarball=local, run=apt)
    assert (tree / fetch.STAMP).exists() and not [c for c in apt.calls if c[0] == "apt-get"]


def test_never_inside_a_git_checkout(tmp_path, apt_dir):
    (tmp_path / ".git").mkdir()
    data = _tarball()
    pin = _pin(data)
    with pytest.raises(TorchsplitError, match="inside the git checkout"):
        fetch.fetch(pin, root=tmp_path / "cache", apt_dir=apt_dir, run=FakeApt(data, pin))
    assert not (tmp_path / "cache").exists()


def test_the_pins_and_the_cli(capsys):
    assert set(PINS) == {"2.6.0", "1.13.1"}
    assert PINS["2.6.0"].sha256.startswith("099a9601") and PINS["2.6.0"].suite == "trixie"
    assert PINS["1.13.1"].apt_spec == "pytorch=1.13.1+dfsg-4"
    assert main(["upstream", "fetch", "--version", "3.0.0"]) == 2
    assert "torchsplit: error: no pinned PyTorch source for version '3.0.0'" in (
        capsys.readouterr().err
    )
