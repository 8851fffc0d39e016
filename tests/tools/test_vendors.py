"""The shared vendor vocabulary (torchsplit.vendors) every check asks."""

import pytest

from torchsplit.vendors import (
    library_family,
    python_module_family,
    symbol_family,
    toolkit_path_family,
)


@pytest.mark.parametrize(
    ("text", "family"),
    [
        ("libcudart.so.13", "cuda"),
        ("libnvidia-ml.so.1", "cuda"),
        ("-lcudart", None),  # a linker flag, not a file name: BUILD checks spell it out
        ("libnvrtc-builtins.so.13.0", "cuda"),
        ("libamdhip64.so.6", "rocm"),
        ("libMIOpen.so", "rocm"),
        ("libtorch_core.so", None),
        ("libc.so.6", None),
        ("libcudaforge_helper", None),
    ],
)
def test_library_family(text: str, family: str | None) -> None:
    assert library_family(text) == family


@pytest.mark.parametrize(
    ("symbol", "family"),
    [
        ("cudaMalloc", "cuda"),
        ("cuInit", "cuda"),
        ("cuLaunchKernel@libcuda.so.1", "cuda"),
        ("nvmlInit_v2", "cuda"),
        ("ncclCommInitRank", "cuda"),
        ("hipMalloc", "rocm"),
        ("curl_easy_init", None),
        ("cumsum", None),
        ("memcpy", None),
        ("PyInit__C", None),
    ],
)
def test_symbol_family(symbol: str, family: str | None) -> None:
    assert symbol_family(symbol) == family


def test_python_modules_and_toolkit_paths() -> None:
    assert python_module_family("pynvml") == "cuda"
    assert python_module_family("cuda.bindings") == "cuda"
    assert python_module_family("cudaforge") is None
    assert python_module_family("numpy") is None
    assert toolkit_path_family("-I/usr/local/cuda-13.0/include") == "cuda"
    assert toolkit_path_family("-L/opt/rocm/lib") == "rocm"
    assert toolkit_path_family("-I/usr/include") is None
