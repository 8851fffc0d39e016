"""``torchsplit new-backend NAME``: a new backend from a template, verified before it is written."""

from __future__ import annotations

import argparse
import shutil
import textwrap
from pathlib import Path

from torchsplit.audit.policy import load_policy
from torchsplit.backend import checkout_files, generate, naming, policy_edit, verify
from torchsplit.errors import TorchsplitError

DESCRIPTION = (
    "Create third_device/NAME. By default a renamed copy of torch_emu (every token: package, "
    "device type, extension, process-group backend, environment variables, classes, files), "
    "after checking each name is free. With --from torch_cuda --translate hip, a backend "
    "derived from torch_cuda instead: its sources translated to HIP at build time, like "
    "torch_hip (docs/torch_hip.md), with entries in the layering policy's DERIVED_BACKENDS and "
    "TOOLKITS (the model's toolkit) and MODULE.bazel's toolkit visibility kept in step. A "
    "template that needs a toolkit is never copied. The backend is rendered and formatted in a "
    "scratch directory and built from there (bazel --package_path), its layering graph test, "
    "source lists and import checked, and only then written into the tree; the layering audit "
    "runs last, and a failure removes it again and restores every file it changed."
)

EXIT_CODES = """exit status:
  0    the backend was written (and verified, unless --no-verify)
  2    nothing was written: a bad or taken name, an existing backend, a template
       that cannot be copied, or a verification that failed (the tree is as it was)
  130  interrupted: nothing was written"""


def _root(arg: str | None) -> Path:
    start = Path(arg or ".").resolve()
    for candidate in (start, *start.parents):
        if (candidate / "third_device").is_dir() and (candidate / "WORKSPACE").exists():
            return candidate
    raise TorchsplitError("not inside a torchsplit checkout (no WORKSPACE and third_device/)")


def _say(line: str) -> None:
    print(f"new-backend: {line}", flush=True)


def _plan(
    root: Path, args: argparse.Namespace
) -> tuple[naming.BackendNames, dict[str, str], dict[str, str]]:
    """Names checked, files rendered and central edits made, in memory: nothing is written
    yet. The edits (path -> new text): the root's //:all_files label (checkout_files.py)
    and, for a derived backend, its policy entries and MODULE.bazel (policy_edit.py)."""
    taken = naming.taken_names(root)
    names = naming.derive(args.name, args.device_name, args.extension, args.collective_name, taken)
    if (root / "third_device" / names.package).exists():
        raise TorchsplitError(
            f"backend {names.package} exists already (third_device/{names.package}); "
            "nothing was changed"
        )
    if not (root / "third_device" / args.template / "BUILD.bazel").is_file():
        raise TorchsplitError(f"no template backend third_device/{args.template} (no BUILD.bazel)")
    derived = load_policy(root / generate.POLICY).derived
    derivation = None
    if args.translate:
        derivation = generate.find_derivation(root, args.template, args.translate, derived)
    else:
        generate.check_template(root, args.template, derived)
    problems = naming.collisions(names, taken)
    if derivation is not None:
        # A derived backend registers no process-group backend (RCCL: see its testing.py).
        problems = [p for p in problems if not p.startswith("process-group backend")]
    if problems:
        raise TorchsplitError(f"cannot create {names.package}: " + "; ".join(problems))
    if derivation is None:
        template = naming.read_template(root, args.template)
        _say(f"{names.describe()}")
        _say(f"copying {template.package} ({template.describe()})")
        files = generate.render(root, template, names)
        return names, files, checkout_files.grant(root, names.package)
    _say(
        f"package {names.package}, device type '{names.device}', extension {names.extension}, "
        f"environment {names.env_prefix}*"
    )
    _say(
        f"deriving from {derivation.parent}: its sources translated by hipify_sources at build "
        f"time, the hand-written HIP part modelled on {derivation.model.package}"
    )
    grant = policy_edit.Grant(
        names.package, derivation.model.package, derivation.parent, derivation.via
    )
    edits = policy_edit.grant_derived(root, grant)  # refuses a stale entry before any write
    edits.update(checkout_files.grant(root, names.package))
    return names, generate.render_derived(root, derivation, names), edits


def cmd_new_backend(args: argparse.Namespace) -> int:
    root = _root(args.workspace)
    names, files, edits = _plan(root, args)
    scratch = generate.stage(files, names.package)
    try:
        for ran in generate.format_backend(root, scratch / "third_device" / names.package):
            _say(f"formatted: {ran}")
        files = generate.read_back(scratch, names.package)
        if policy_edit.POLICY in edits:
            # Bazel reads the layering package from the scratch root too (verify.py): the
            # aspect, the parent's exported sources and WORKSPACE's toolkit visibility
            # see the new backend's entries before anything is written.
            layering = scratch / Path(policy_edit.POLICY).parent
            shutil.copytree(root / Path(policy_edit.POLICY).parent, layering)
            (scratch / policy_edit.POLICY).write_text(edits[policy_edit.POLICY], encoding="utf-8")
            others = sorted(set(edits) - {policy_edit.POLICY, checkout_files.ROOT_BUILD})
            kept = f"; {', '.join(others)}: toolkit visibility kept in step" if others else ""
            _say(
                f"{policy_edit.POLICY}: DERIVED_BACKENDS and TOOLKITS gain {names.package} "
                f"(its model's toolkit){kept}"
            )
        if checkout_files.ROOT_BUILD in edits:
            _say(
                f"{checkout_files.ROOT_BUILD}: //:all_files gains "
                f"//third_device/{names.package}:all_files (the checkout workspace tests copy)"
            )
        if not args.no_verify:
            verify.verify_scratch(root, scratch, names, _say)
        changed, old = generate.install(root, names.package, files, edits)
        try:
            if not args.no_verify:
                verify.verify_in_place(root, _say)
        except BaseException:
            generate.uninstall(root, names.package, old)
            raise
    except TorchsplitError as exc:
        raise TorchsplitError(f"{exc}\nnothing was written (the tree is as it was)") from exc
    except KeyboardInterrupt:
        print("torchsplit: interrupted: nothing was written", flush=True)
        return 130
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    _say(f"wrote {len(files)} files: {', '.join(changed)}")
    verified = "" if args.no_verify else "built, checked and imported; "
    _say(
        f"{names.package}: {verified}conformance: "
        f"bazel test //third_device/{names.package}:conformance_test"
    )
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "new-backend",
        help="create third_device/NAME from a template backend, renamed, and verify it",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(DESCRIPTION, width=79),
        epilog=EXIT_CODES,
    )
    p.add_argument("name", help="the backend's package, e.g. torch_acme")
    p.add_argument("--from", dest="template", default="torch_emu", help="template backend")
    p.add_argument(
        "--translate",
        choices=["hip"],
        help="derive from --from (a CUDA backend) by translating its sources to HIP at build time",
    )
    p.add_argument("--device-name", help="device type (default: NAME without torch_)")
    p.add_argument("--extension", help="extension module (default: _<DEVICE>C)")
    p.add_argument(
        "--collective-name",
        help="process-group backend (default: <first letter>ccl, or <device>ccl when taken)",
    )
    p.add_argument("--workspace", help="the checkout (default: the one around .)")
    p.add_argument("--no-verify", action="store_true", help="skip build and checks")
    p.set_defaults(func=cmd_new_backend)
