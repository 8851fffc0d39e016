"""Classification with the default (upstream PyTorch) rules, and rule-file validation."""

from pathlib import Path

import pytest

from torchsplit.errors import TorchsplitError
from torchsplit.reorg.classify import classify
from torchsplit.reorg.rules import load_rules, parse_rules, tokens
from torchsplit.reorg.starlark_eval import evaluate

FIXTURE = Path(__file__).parent / "fixtures" / "pytorch_style" / "build_variables.bzl"
CORE = "//core:torch_cpu"
CUDA = "//third_device/torch_cuda:"


@pytest.fixture(scope="module")
def result():
    return classify(evaluate(FIXTURE), load_rules())


EXPECTED = {
    # CUDA lists, module by path and list
    "torch/csrc/CudaIPCTypes.cpp": (CUDA + "framework", "cuda-framework"),
    "torch/csrc/autograd/functions/comm.cpp": (CUDA + "framework", "cuda-framework"),
    "torch/csrc/cuda/nccl.cpp": (CUDA + "framework", "cuda-framework"),
    "torch/csrc/jit/tensorexpr/cuda_codegen.cpp": (CUDA + "jit", "cuda-jit"),
    "torch/csrc/jit/codegen/fuser/cuda/fused_kernel.cpp": (CUDA + "jit", "cuda-jit"),
    "torch/csrc/profiler/stubs/cuda.cpp": (CUDA + "profiler", "cuda-profiler"),
    "torch/csrc/cuda/Module.cpp": (CUDA + "pybinding", "cuda-pybinding"),
    "torch/csrc/cuda/python_nccl.cpp": (CUDA + "pybinding", "cuda-pybinding"),
    "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp": (CUDA + "distributed", "cuda-distributed"),
    "torch/csrc/distributed/c10d/NanCheck.cu": (CUDA + "distributed", "cuda-distributed"),
    "torch/csrc/distributed/c10d/reducer_cuda.cpp": (CUDA + "distributed", "cuda-distributed"),
    "torch/csrc/distributed/rpc/tensorpipe_cuda.cpp": (CUDA + "distributed", "cuda-distributed"),
    "torch/csrc/distributed/c10d/symm_mem/nvshmem_extension.cu": (
        CUDA + "distributed",
        "cuda-distributed",
    ),
    "aten/src/ATen/cuda/CUDABlas.cpp": (CUDA + "aten", "cuda-aten"),
    "aten/src/ATen/native/cudnn/Conv_v7.cpp": (CUDA + "aten", "cuda-aten"),
    "aten/src/ATen/native/nested/cuda/NestedTensorTransformerFunctions.cpp": (
        CUDA + "aten",
        "cuda-aten",
    ),
    "aten/src/ATen/native/cuda/TensorFactories.cu": (CUDA + "aten", "cuda-aten"),
    # traps in core lists
    # (a rule sending a file to "@core" hands over to the core rule of its list)
    "torch/csrc/distributed/c10d/cuda/StreamBlock.cpp": (
        CORE,
        "host-source-in-cpu-list-stays+core-cpu",
    ),
    "torch/csrc/jit/codegen/cuda/interface.cpp": (CORE, "host-source-in-cpu-list-stays+core-cpu"),
    "aten/src/ATen/detail/CUDAHooksInterface.cpp": (CORE, "hooks-interface-stays-in-core+core-cpu"),
    # core
    "aten/src/ATen/native/nested/NestedTensorMath.cpp": (CORE, "core-cpu"),
    "torch/csrc/jit/codegen/fuser/interface.cpp": (CORE, "core-cpu"),
    ":generate-code[torch/csrc/autograd/generated/Functions.cpp]": (CORE, "core-cpu"),
    "third_party/mystery/thing.cpp": (CORE, "unruled-list-to-core"),
}


@pytest.mark.parametrize("source", sorted(EXPECTED))
def test_decision(result, source):
    decision = result.decisions[source]
    assert (decision.target, decision.rule) == EXPECTED[source]


def test_every_source_has_exactly_one_destination(result):
    ev = evaluate(FIXTURE)
    every = {s for values in ev.lists.values() for s in values}
    assert set(result.decisions) == every
    placed = [s for sources in result.by_target().values() for s in sources]
    assert sorted(placed) == sorted(every)


def _flags(result, kind):
    return {f.subject for f in result.flags_of(kind)}


def test_flags_need_a_human(result):
    assert _flags(result, "cuda-in-core-list") == {
        "aten/src/ATen/detail/CUDAHooksInterface.cpp",
        "torch/csrc/distributed/c10d/cuda/StreamBlock.cpp",
        "torch/csrc/inductor/static_launcher/cuda.cpp",
        "torch/csrc/jit/codegen/cuda/interface.cpp",
        "torch/csrc/profiler/standalone/nvtx_observer.cpp",
    }
    assert _flags(result, "in-two-lists") == {
        "torch/csrc/distributed/c10d/cuda/utils.cpp",
        "torch/csrc/jit/serialization/pickle.cpp",
    }
    assert "jit_sources_full" in _flags(result, "duplicate-in-list")
    assert _flags(result, "list-without-rule") == {"mystery_sources"}
    assert not result.flags_of("missing-source")


def test_missing_sources_in_a_checkout(tmp_path):
    ev = evaluate(FIXTURE)
    present = "torch/csrc/cuda/comm.cpp"
    (tmp_path / present).parent.mkdir(parents=True)
    (tmp_path / present).write_text("")
    result = classify(ev, load_rules(), source_tree=tmp_path)
    missing = {f.subject for f in result.flags_of("missing-source")}
    assert present not in missing
    assert "torch/csrc/CudaIPCTypes.cpp" in missing
    assert not any(s.startswith(":") for s in missing)  # generated labels are not files


def test_tokens_split_camel_case_and_punctuation():
    assert "nccl" in tokens("NCCLUtils.cpp")
    assert "cuda" in tokens("CUDAHooksInterface.cpp")
    assert "cuda" in tokens("reducer_cuda.cpp")
    assert "cuda" not in tokens("torch/csrc/jit/codegen/fuser/interface.cpp")


def test_user_rules_override_first_match_wins(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text(
        """
name = "custom"
[targets.core]
label = "//core:torch_cpu"
[targets.cuda]
label = "//third_device/torch_cuda:framework"
[[rule]]
name = "keep-streamblock"
path = ['StreamBlock']
target = "core"
[[rule]]
name = "cuda"
cuda = true
target = "cuda"
[[rule]]
name = "rest"
fallback = true
target = "core"
"""
    )
    result = classify(evaluate(FIXTURE), load_rules(rules))
    assert result.decisions["torch/csrc/distributed/c10d/cuda/StreamBlock.cpp"].rule == (
        "keep-streamblock"
    )
    assert result.decisions["torch/csrc/cuda/Module.cpp"].target.endswith(":framework")
    assert not result.flags_of("list-without-rule") or all(
        f.subject for f in result.flags_of("list-without-rule")
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("name='x'\n[[rule]]\nname='a'\ntarget='core'\nfallback=true\n", "targets"),
        (
            "[targets.core]\nlabel='//core:t'\n[[rule]]\nname='a'\ntarget='nope'\nfallback=true\n",
            "unknown target 'nope'",
        ),
        ("[targets.core]\nlabel='//core:t'\n[[rule]]\nname='a'\ntarget='core'\n", "fallback"),
        (
            "[targets.core]\nlabel='core:t'\n[[rule]]\nname='a'\ntarget='core'\nfallback=true\n",
            "is not //pkg:name",
        ),
        (
            "[targets.core]\nlabel='//core:t'\n[[rule]]\nname='a'\ntarget='core'\nfallback=true\n"
            "colour='red'\n",
            "unknown keys",
        ),
    ],
)
def test_bad_rules_are_reported(tmp_path, body, message):
    path = tmp_path / "r.toml"
    path.write_text(body)
    with pytest.raises(TorchsplitError, match=message) as err:
        load_rules(path)
    assert str(path) in str(err.value)


def test_invalid_toml_names_the_file(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text("[targets\n")
    with pytest.raises(TorchsplitError, match="invalid TOML"):
        load_rules(path)


def test_parse_rules_regex_groups_select_target():
    rs = parse_rules(
        {
            "targets": {
                "core": {"label": "//core:torch_cpu"},
                "emu_aten": {"label": "//third_device/torch_emu:aten"},
            },
            "rule": [
                {
                    "name": "m",
                    "list_regex": r"^torch_(?P<b>emu)_(?P<m>aten)_sources$",
                    "target": "{b}_{m}",
                },
                {"name": "f", "target": "core", "fallback": True},
            ],
        },
        "inline",
    )
    from torchsplit.reorg.rules import match_rule

    assert match_rule(rs.rules[0], rs, "torch_emu_aten_sources", "x.cpp")[0] == "emu_aten"
    assert match_rule(rs.rules[0], rs, "torch_emu_jit_sources", "x.cpp") is None
