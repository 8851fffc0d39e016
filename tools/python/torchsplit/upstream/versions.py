"""The real PyTorch source trees torchsplit knows: Debian's source packages, pinned.

Debian's archive carries the upstream release trees (``dfsg``: most of ``third_party/``
removed, which Debian replaces by its own packages). Each pin names the source package
version, the suite that has it, and the orig tarball's size and sha256, so a fetch is
checked byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass

from torchsplit.errors import TorchsplitError


@dataclass(frozen=True)
class Pin:
    version: str  # upstream version, the name of the cache directory
    package: str  # Debian source package
    debian_version: str  # what `apt-get source PACKAGE=VERSION` asks for
    suite: str  # the Debian suite whose deb-src index lists it
    tarball: str  # the orig tarball apt-get downloads
    size: int
    sha256: str

    @property
    def apt_spec(self) -> str:
        return f"{self.package}={self.debian_version}"


PINS: dict[str, Pin] = {
    pin.version: pin
    for pin in (
        Pin(
            version="2.6.0",
            package="pytorch",
            debian_version="2.6.0+dfsg-7",
            suite="trixie",
            tarball="pytorch_2.6.0+dfsg.orig.tar.xz",
            size=27_212_640,
            sha256="099a9601bc40d67656e75735c44abedb0fbe92d08817852ab7472eebb7e6ddff",
        ),
        Pin(
            version="1.13.1",
            package="pytorch",
            debian_version="1.13.1+dfsg-4",
            suite="bookworm",
            tarball="pytorch_1.13.1+dfsg.orig.tar.xz",
            size=18_331_132,
            sha256="d0355588b8528566d477e6ebf1b4d9d036a6fd75711339f66b27472ce5879dc7",
        ),
    )
}
DEFAULT_VERSION = "2.6.0"


def pin_for(version: str) -> Pin:
    try:
        return PINS[version]
    except KeyError:
        known = ", ".join(sorted(PINS))
        raise TorchsplitError(
            f"no pinned PyTorch source for version {version!r}; known: {known}"
        ) from None
