"""Parses --@rules_cuda//cuda:archs into nvcc -gencode flags.

The syntax is upstream rules_cuda's: specs separated by ';', each either
`VIRTUAL:GPU[,GPU...]` (e.g. `compute_80:sm_80,sm_86`) or a bare architecture:
`sm_XX` means real code for XX (from compute_XX), `compute_XX` means PTX for XX.
Commas between bare architectures are accepted too (`sm_80,sm_90`).
"""

def _arch_number(arch, what):
    for prefix in ["sm_", "compute_"]:
        if arch.startswith(prefix):
            number = arch[len(prefix):]
            digits = number.rstrip("af")
            if digits and digits.isdigit():
                return number
    fail("--@rules_cuda//cuda:archs: '%s' in %s is not an architecture (expected sm_XX or compute_XX)" % (arch, what))

def parse_archs(value):
    """Returns nvcc `-gencode` flags for an archs flag value.

    Args:
      value: the flag's string value.

    Returns:
      A list of strings, two per compiled architecture.
    """
    flags = []
    for spec in [s.strip() for s in value.split(";") if s.strip()]:
        if ":" in spec:
            virtual, gpus = spec.split(":", 1)
            if not virtual.startswith("compute_"):
                fail("--@rules_cuda//cuda:archs: '%s' must start with a compute_XX virtual architecture" % spec)
            _arch_number(virtual, spec)
            for gpu in [g.strip() for g in gpus.split(",") if g.strip()]:
                _arch_number(gpu, spec)
                flags.extend(["-gencode", "arch=%s,code=%s" % (virtual, gpu)])
            continue
        for arch in [a.strip() for a in spec.split(",") if a.strip()]:
            number = _arch_number(arch, spec)
            flags.extend(["-gencode", "arch=compute_%s,code=%s" % (number, arch)])
    if not flags:
        fail("--@rules_cuda//cuda:archs is empty: name at least one architecture, e.g. sm_90")
    return flags
