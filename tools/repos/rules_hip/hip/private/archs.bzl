"""Parses --@rules_hip//hip:archs into hipcc --offload-arch flags.

Specs are separated by ';' or ',': an AMD GPU target `gfxNNN` (hex digits,
e.g. gfx90a, gfx1030), optionally with target features as clang spells them
(`gfx90a:xnack+`). Each becomes one code object in the fat binary.
"""

_HEX = "0123456789abcdef"

def _check(arch):
    name = arch.split(":")[0]
    digits = name[len("gfx"):]
    if not name.startswith("gfx") or not digits or [c for c in digits.elems() if c not in _HEX]:
        fail("--@rules_hip//hip:archs: '%s' is not an AMD GPU target (expected gfxNNN, e.g. gfx90a or gfx1030)" % arch)
    for feature in arch.split(":")[1:]:
        if not (feature.endswith("+") or feature.endswith("-")) or len(feature) < 2:
            fail("--@rules_hip//hip:archs: feature '%s' of '%s' must end in + or - (e.g. xnack+)" % (feature, arch))

def parse_archs(value):
    """Returns hipcc flags for an archs flag value.

    Args:
      value: the flag's string value.

    Returns:
      A list of strings, one --offload-arch per target.
    """
    archs = [a.strip() for a in value.replace(",", ";").split(";") if a.strip()]
    if not archs:
        fail("--@rules_hip//hip:archs is empty: name at least one target, e.g. gfx90a")
    for arch in archs:
        _check(arch)
    return ["--offload-arch=" + a for a in archs]
