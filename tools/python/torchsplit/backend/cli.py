"""``torchsplit new-backend NAME``: copy a template backend, renamed, and check it works."""

from __future__ import annotations

import argparse
from pathlib import Path

from torchsplit.backend import generate, naming, verify
from torchsplit.errors import TorchsplitError


def _root(arg: str | None) -> Path:
    start = Path(arg or ".").resolve()
    for candidate in (start, *start.parents):
        if (candidate / "third_device").is_dir() and (candidate / "WORKSPACE").exists():
            return candidate
    raise TorchsplitError("not inside a torchsplit checkout (no WORKSPACE and third_device/)")


def cmd_new_backend(args: argparse.Namespace) -> int:
    root = _root(args.workspace)
    names = naming.derive(args.name, args.device_name, args.extension)
    target = root / "third_device" / names.package
    if target.exists():
        raise TorchsplitError(
            f"backend {names.package} exists already (third_device/{names.package}); "
            "nothing was changed"
        )
    template = naming.read_template(root, args.template)
    problems = naming.collisions(names, naming.taken_names(root))
    if problems:
        raise TorchsplitError(
            f"cannot create {names.package}: " + "; ".join(problems)
            + " (choose other names with --device-name / --extension)"
        )  # fmt: skip
    print(f"new-backend: {names.describe()}")
    print(f"new-backend: copying {template.package} ({template.describe()})")
    files = generate.render(root, template, names)
    generate.write_backend(root, names.package, files)
    print(f"new-backend: wrote {len(files)} files under third_device/{names.package}/")
    for ran in generate.format_backend(root, target):
        print(f"new-backend: formatted: {ran}")
    if args.no_verify:
        return 0
    verify.verify(root, names, lambda line: print(f"new-backend: {line}", flush=True))
    print(
        f"new-backend: {names.package} builds, agrees with reorg check and the layering audit, "
        f"and makes tensors on {names.device}:0. Conformance: "
        f"bazel test //third_device/{names.package}:conformance_test"
    )
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "new-backend",
        help="create third_device/NAME from a template backend, renamed, and verify it",
        description="Copy a template backend (default torch_emu) to third_device/NAME, renaming "
        "every token (package, device type, extension, process-group backend, environment "
        "variables, classes, files), after checking each name is free. Then format it and "
        "verify: bazel build, reorg check, layering audit, a tensor on NAME:0. Exit 2 (nothing "
        "changed) when the backend exists or a name is taken.",
    )
    p.add_argument("name", help="the backend's package, e.g. torch_acme")
    p.add_argument("--from", dest="template", default="torch_emu", help="template backend")
    p.add_argument("--device-name", help="device type (default: NAME without torch_)")
    p.add_argument("--extension", help="extension module (default: _<DEVICE>C)")
    p.add_argument("--workspace", help="the checkout (default: the one around .)")
    p.add_argument("--no-verify", action="store_true", help="skip build and checks")
    p.set_defaults(func=cmd_new_backend)
