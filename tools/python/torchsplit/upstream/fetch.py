"""``torchsplit upstream fetch``: a real PyTorch source tree from Debian's archive.

Steps, each said as it happens and skipped when already done:

1. the deb-src entry for the pin's suite: found in ``/etc/apt/sources.list`` or
   ``sources.list.d/``, else written as ``sources.list.d/torchsplit-src.sources``
   (deb822, the URI and key of the machine's own Debian entry) and only that file's
   index refreshed (``apt-get update`` restricted to it);
2. ``apt-get source --download-only PACKAGE=VERSION`` into a ``mkdtemp`` directory;
3. the orig tarball's size and sha256 against the pin;
4. unpacked into a temporary sibling and renamed into place as
   ``<cache>/<version>/`` (``~/.cache/torchsplit/upstream`` or
   ``$TORCHSPLIT_UPSTREAM_CACHE``), with a stamp naming the tarball's hash.

A tree with a valid stamp is reused as it is (nothing downloaded). A lock file makes
concurrent fetches of one version wait for each other; a killed run's temporaries are
removed by the next run. Nothing is ever written inside a git checkout.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from torchsplit.errors import TorchsplitError
from torchsplit.upstream.versions import Pin

STAMP = ".torchsplit-fetched"
SOURCES_NAME = "torchsplit-src.sources"
APT_TIMEOUT = ["-o", "DPkg::Lock::Timeout=600"]
DEFAULT_URI = "http://deb.debian.org/debian"
DEFAULT_KEY = "/usr/share/keyrings/debian-archive-keyring.gpg"

Say = Callable[[str], None]
Run = Callable[[Sequence[str], Path | None], subprocess.CompletedProcess[str]]


def run_command(argv: Sequence[str], cwd: Path | None) -> subprocess.CompletedProcess[str]:
    """The default runner: argv only, output captured, never raises on a non-zero exit."""
    try:
        return subprocess.run(
            list(argv), cwd=cwd, capture_output=True, text=True, check=False, timeout=3600
        )
    except FileNotFoundError as exc:
        raise TorchsplitError(f"cannot run {argv[0]}: not installed (this needs apt)") from exc


def cache_root() -> Path:
    env = os.environ.get("TORCHSPLIT_UPSTREAM_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "torchsplit" / "upstream"


def tree_dir(pin: Pin, root: Path | None = None) -> Path:
    return (root or cache_root()) / pin.version


def read_stamp(tree: Path) -> dict[str, object]:
    """What a fetched tree's stamp says (empty when it has none)."""
    try:
        data = json.loads((tree / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def fetched(pin: Pin, root: Path | None = None) -> bool:
    """True when the tree is in place and was unpacked from the pinned tarball."""
    return read_stamp(tree_dir(pin, root)).get("sha256") == pin.sha256


# --- deb-src entries ---------------------------------------------------------


@dataclass(frozen=True)
class AptEntry:
    types: tuple[str, ...]
    uris: tuple[str, ...]
    suites: tuple[str, ...]
    components: tuple[str, ...]
    signed_by: str
    path: Path


def _deb822(path: Path, text: str) -> Iterator[AptEntry]:
    for stanza in text.split("\n\n"):
        fields: dict[str, str] = {}
        key = ""
        for line in stanza.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if line[0].isspace() and key:
                fields[key] += " " + line.strip()
                continue
            key, _, value = line.partition(":")
            key = key.strip().lower()
            fields[key] = value.strip()
        if fields.get("enabled", "yes").lower() == "no" or "types" not in fields:
            continue
        yield AptEntry(
            tuple(fields.get("types", "").split()),
            tuple(fields.get("uris", "").split()),
            tuple(fields.get("suites", "").split()),
            tuple(fields.get("components", "").split()),
            fields.get("signed-by", ""),
            path,
        )


def _one_line(path: Path, text: str) -> Iterator[AptEntry]:
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line.startswith(("deb ", "deb-src ")):
            continue
        kind, rest = line.split(None, 1)
        signed_by = ""
        if rest.startswith("["):
            options, _, rest = rest[1:].partition("]")
            for option in options.split():
                if option.startswith("signed-by="):
                    signed_by = option.split("=", 1)[1]
        parts = rest.split()
        if len(parts) >= 2:
            yield AptEntry((kind,), (parts[0],), (parts[1],), tuple(parts[2:]), signed_by, path)


def apt_entries(apt_dir: Path) -> list[AptEntry]:
    """Every enabled entry of ``sources.list`` and ``sources.list.d/*.{list,sources}``."""
    files = [apt_dir / "sources.list"]
    parts = apt_dir / "sources.list.d"
    if parts.is_dir():
        files += sorted(p for p in parts.iterdir() if p.suffix in (".list", ".sources"))
    out: list[AptEntry] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out.extend((_deb822 if path.suffix == ".sources" else _one_line)(path, text))
    return out


def find_deb_src(entries: list[AptEntry], suite: str) -> AptEntry | None:
    for entry in entries:
        if "deb-src" in entry.types and suite in entry.suites and "main" in entry.components:
            return entry
    return None


def render_sources(entries: list[AptEntry], suites: Sequence[str]) -> str:
    """A deb822 deb-src stanza for ``suites``, on the machine's own Debian mirror and key."""
    uri, key = DEFAULT_URI, DEFAULT_KEY
    for entry in entries:
        if "deb" in entry.types and entry.uris and "security" not in entry.uris[0]:
            uri, key = entry.uris[0], entry.signed_by or DEFAULT_KEY
            break
    return (
        "# Written by `torchsplit upstream fetch`: Debian's source packages of PyTorch.\n"
        "Types: deb-src\n"
        f"URIs: {uri}\n"
        f"Suites: {' '.join(suites)}\n"
        "Components: main\n"
        f"Signed-By: {key}\n"
    )


def ensure_deb_src(pin: Pin, apt_dir: Path, say: Say, run: Run) -> None:
    """Adds the deb-src entry for the pin's suite when no enabled entry has it, and
    refreshes that entry's index alone."""
    entries = apt_entries(apt_dir)
    found = find_deb_src(entries, pin.suite)
    if found is not None:
        say(f"deb-src entry for {pin.suite}: {found.path}")
        return
    path = apt_dir / "sources.list.d" / SOURCES_NAME
    suites = [pin.suite]
    mine = [e for e in entries if e.path == path and "deb-src" in e.types]
    for entry in mine:
        suites += [s for s in entry.suites if s not in suites]
    text = render_sources(entries, suites)
    say(f"adding the deb-src entry for {pin.suite} ({path})")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise TorchsplitError(
            f"cannot write the deb-src entry ({exc.strerror}); as root, or add it by hand:\n{text}",
            path=str(path),
        ) from exc
    apt_update(path, say, run)


def apt_update(sources: Path, say: Say, run: Run) -> None:
    """``apt-get update`` of one sources file's index; the other lists are kept."""
    say(f"apt-get update ({sources} only)")
    with tempfile.TemporaryDirectory(prefix="torchsplit-apt-") as parts:
        if sources.suffix == ".sources":  # deb822: SourceParts is a directory of them
            shutil.copy(sources, Path(parts) / sources.name)
            only = ["-o", "Dir::Etc::SourceList=/dev/null", "-o", f"Dir::Etc::SourceParts={parts}"]
        else:
            only = ["-o", f"Dir::Etc::SourceList={sources}", "-o", f"Dir::Etc::SourceParts={parts}"]
        argv = ["apt-get", *APT_TIMEOUT, *only, "-o", "APT::Get::List-Cleanup=0", "update", "-qq"]
        proc = run(argv, None)
    if proc.returncode != 0:
        raise TorchsplitError(f"apt-get update failed:\n{proc.stderr.strip()[-2000:]}")


# --- download, check, unpack -------------------------------------------------


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(tarball: Path, pin: Pin) -> None:
    size = tarball.stat().st_size
    if size != pin.size:
        raise TorchsplitError(f"is {size} bytes, the pin says {pin.size}", path=str(tarball))
    digest = sha256_of(tarball)
    if digest != pin.sha256:
        raise TorchsplitError(f"sha256 {digest} does not match the pin {pin.sha256}", str(tarball))


def download(pin: Pin, workdir: Path, apt_dir: Path, say: Say, run: Run) -> Path:
    """``apt-get source --download-only`` into ``workdir``; returns the orig tarball.

    Debian's ``.debian.tar.xz`` may be missing from a mirror: apt-get then exits non-zero
    after fetching the orig tarball, which is all this needs, so its exit status only
    matters when the tarball is not there."""
    say(f"apt-get source --download-only {pin.apt_spec} (into {workdir})")
    argv = ["apt-get", *APT_TIMEOUT, "source", "--download-only", "-qq", pin.apt_spec]
    proc = run(argv, workdir)
    if proc.returncode != 0 and "Unable to find a source package" in proc.stderr:
        entry = find_deb_src(apt_entries(apt_dir), pin.suite)
        if entry is not None:
            apt_update(entry.path, say, run)
            proc = run(argv, workdir)
    tarball = workdir / pin.tarball
    if not tarball.is_file():
        raise TorchsplitError(
            f"apt-get source {pin.apt_spec} did not download {pin.tarball} "
            f"(exit {proc.returncode}):\n{proc.stderr.strip()[-2000:]}"
        )
    if proc.returncode != 0:
        say(f"apt-get exited {proc.returncode}, but {pin.tarball} is complete; going on")
    return tarball


def unpack(tarball: Path, pin: Pin, root: Path, say: Say, run: Run) -> Path:
    """Unpacks into a temporary sibling of the tree, then renames it into place."""
    dest = tree_dir(pin, root)
    staging = Path(tempfile.mkdtemp(prefix=f".{pin.version}.", suffix=".partial", dir=root))
    try:
        say(f"unpacking {tarball.name} into {dest}")
        proc = run(["tar", "-xJf", str(tarball), "--no-same-owner", "-C", str(staging)], None)
        if proc.returncode != 0:
            raise TorchsplitError(f"tar failed: {proc.stderr.strip()[-1000:]}", str(tarball))
        tops = [p for p in staging.iterdir()]
        if len(tops) != 1 or not tops[0].is_dir():
            raise TorchsplitError(
                f"expected one top directory, found {sorted(p.name for p in tops)}", str(tarball)
            )
        top = tops[0]
        stamp = {
            "version": pin.version,
            "debian_version": pin.debian_version,
            "tarball": pin.tarball,
            "sha256": pin.sha256,
            "top": top.name,
        }
        (top / STAMP).write_text(json.dumps(stamp, indent=1) + "\n", encoding="utf-8")
        if dest.exists():  # an earlier tree without a valid stamp
            shutil.rmtree(dest)
        os.rename(top, dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest


@contextmanager
def _locked(root: Path, version: str) -> Iterator[None]:
    with open(root / f".{version}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _remove_leftovers(root: Path, version: str, say: Say) -> None:
    """Temporaries of a killed run of this version (under the lock, so none is live)."""
    for pattern in (f".{version}.*.partial", f".{version}.*.download"):
        for path in root.glob(pattern):
            say(f"removing {path.name}, left by an interrupted fetch")
            shutil.rmtree(path, ignore_errors=True)


def fetch(
    pin: Pin,
    *,
    root: Path | None = None,
    apt_dir: Path = Path("/etc/apt"),
    tarball: Path | None = None,
    say: Say = lambda _: None,
    run: Run = run_command,
) -> Path:
    """The unpacked tree of ``pin``, fetched when missing; see the module docstring.

    ``tarball`` uses a local copy of the orig tarball (checked against the pin)
    instead of apt-get."""
    root = root or cache_root()
    dest = tree_dir(pin, root)
    if fetched(pin, root):
        say(f"PyTorch {pin.version} already fetched: {dest}")
        return dest
    for parent in root.resolve().parents:
        if (parent / ".git").exists():
            raise TorchsplitError(
                f"is inside the git checkout {parent}; fetched code never goes into a "
                "repository: choose another TORCHSPLIT_UPSTREAM_CACHE",
                path=str(root),
            )
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TorchsplitError(f"cannot create the cache: {exc.strerror}", str(root)) from exc
    with _locked(root, pin.version):
        if fetched(pin, root):  # another fetch finished while this one waited
            say(f"PyTorch {pin.version} already fetched: {dest}")
            return dest
        _remove_leftovers(root, pin.version, say)
        work = Path(tempfile.mkdtemp(prefix=f".{pin.version}.", suffix=".download", dir=root))
        try:
            if tarball is None:
                ensure_deb_src(pin, apt_dir, say, run)
                local = download(pin, work, apt_dir, say, run)
            else:
                say(f"using the local tarball {tarball}")
                local = tarball
            verify(local, pin)
            say(f"{pin.tarball}: {pin.size} bytes, sha256 {pin.sha256[:16]}... matches the pin")
            return unpack(local, pin, root, say, run)
        finally:
            shutil.rmtree(work, ignore_errors=True)
