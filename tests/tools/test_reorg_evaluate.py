"""Evaluation of PyTorch-style build_variables.bzl with the real Starlark interpreter."""

from pathlib import Path

import pytest

from torchsplit.errors import TorchsplitError
from torchsplit.reorg.starlark_eval import evaluate, evaluate_text

FIXTURE = Path(__file__).parent / "fixtures" / "pytorch_style" / "build_variables.bzl"


@pytest.fixture(scope="module")
def ev():
    return evaluate(FIXTURE)


def test_plain_lists_sorted_plus_and_alias(ev):
    assert ev.lists["libtorch_sources_common"] == [
        "torch/csrc/autograd/autograd_meta.cpp",
        "torch/csrc/jit/runtime/operator.cpp",
        "torch/csrc/jit/serialization/unpickler.cpp",
        "torch/csrc/profiler/util.cpp",
    ]
    assert ev.lists["core_sources_full"][-1] == "torch/csrc/jit/serialization/pickle.cpp"
    assert ev.lists["aten_native_source_list"] == ev.lists["aten_cpu_source_list"]
    assert ev.lists["libtorch_cuda_sources"][-1] == "torch/csrc/cuda/nccl.cpp"
    assert len(ev.lists["libtorch_cuda_sources"]) == 8 + 1 + 6 + 1


def test_top_level_comprehension_with_format(ev):
    assert ev.lists["aten_cuda_headers"] == ["aten/src/ATen/cuda/CUDABlas.h"]


def test_functions_called_with_their_defaults(ev):
    sources = ev.lists["libtorch_sources()"]
    assert sources[:2] == [
        ":generate-code[torch/csrc/autograd/generated/Functions.cpp]",
        ":generate-code[torch/csrc/autograd/generated/VariableType_0.cpp]",
    ]
    # .extend() on a local, then read_config's default (None) keeps flatbuffer out
    assert "torch/csrc/distributed/c10d/ProcessGroup.cpp" in sources
    assert "torch/csrc/jit/serialization/flatbuffer_serializer.cpp" not in sources
    py = ev.lists["glob_libtorch_python_sources()"]
    assert py == [
        ":generate-code[torch/csrc/autograd/generated/python_functions_0.cpp]",
        "torch/csrc/Module.cpp",
        "torch/csrc/inductor/static_launcher/cuda.cpp",
    ]
    assert "libtorch_generated_sources" in ev.skipped_functions
    assert "NUM_SHARDS" in ev.ignored_globals


def test_stubs_are_recorded_and_configurable(tmp_path):
    ev = evaluate(FIXTURE, config_values={("fbcode", "caffe2_enable_flatbuffer"): "1"})
    assert (
        "torch/csrc/jit/serialization/flatbuffer_serializer.cpp" in ev.lists["libtorch_sources()"]
    )
    kinds = [c.function for c in ev.stub_calls]
    assert kinds == ["native.read_config", "native.glob"]
    assert ev.stub_calls[0].result == "'1'"

    extra = tmp_path / "torch" / "csrc" / "python_extra"
    extra.mkdir(parents=True)
    (extra / "b.cpp").write_text("")
    (extra / "a.cpp").write_text("")
    (extra / "skip.h").write_text("")
    ev = evaluate(FIXTURE, glob_root=tmp_path)
    assert ev.lists["glob_libtorch_python_sources()"][-2:] == [
        "torch/csrc/python_extra/a.cpp",
        "torch/csrc/python_extra/b.cpp",
    ]


def test_literals_know_their_home_and_line(ev):
    homes = ev.home_of("torch/csrc/distributed/c10d/cuda/utils.cpp")
    assert {h.region for h in homes} == {
        "libtorch_cuda_distributed_extra_sources",
        "libtorch_nvshmem_sources",
    }
    text = FIXTURE.read_text().splitlines()
    for h in homes:
        assert "torch/csrc/distributed/c10d/cuda/utils.cpp" in text[h.line - 1]
    # a formatted label finds the literal written inside the function
    gen = ev.home_of(":generate-code[torch/csrc/autograd/generated/python_functions_0.cpp]")
    assert [h.region for h in gen] == ["glob_libtorch_python_sources()"]


def test_runtime_error_points_at_original_line():
    text = 'a = ["x"]\n\nb = [\n    "y",\n    "z" + 1,\n]\n'
    with pytest.raises(TorchsplitError) as err:
        evaluate_text(text, name="broken.bzl")
    assert err.value.path == "broken.bzl"
    assert err.value.line == 5
    assert "not supported" in str(err.value)
    assert '"z" + 1' in str(err.value)


def test_python_only_syntax_is_rejected_not_executed(tmp_path):
    bad = tmp_path / "build_variables.bzl"
    bad.write_text('import os\nx = os.system("echo pwned")\n')
    with pytest.raises(TorchsplitError) as err:
        evaluate(bad)
    assert err.value.line == 1
    assert str(bad) in str(err.value)


def test_parse_error_line():
    with pytest.raises(TorchsplitError) as err:
        evaluate_text('a = [\n    "x"\n    "y",\n]\n', name="p.bzl")
    assert err.value.line == 3
    assert "expected" in str(err.value)


def test_missing_file_is_a_user_error(tmp_path):
    with pytest.raises(TorchsplitError, match="no such file"):
        evaluate(tmp_path / "nope.bzl")
