"""The host-code fuser: C++ from the code generator, built by the host compiler.

It serves every device whose kernels are host code: the CPU, and devices
such as torch_emu whose streams run host functions. The compiled function is
registered with core's dispatcher as op ``fused_<hash>`` for the device type
and run by the type's launcher (C++ ``FusedLaunchers``): the CPU calls it at
once; emu queues it on the current stream as one task.
"""

from __future__ import annotations

from collections.abc import Sequence

from torch_core import _C
from torch_core.jit._cache import kernel_cache
from torch_core.jit._codegen import emit_host_source
from torch_core.jit._compiler import CompilerUnavailable, find_host_compiler
from torch_core.jit._ir import Graph
from torch_core.jit._registry import FusedKernel
from torch_core.jit._stats import warn_once

Tensor = _C.Tensor


class DispatchedKernel:
    """A fused kernel registered with the dispatcher: each call is one dispatch of op ``name``."""

    def __init__(self, name: str, reduction: bool) -> None:
        self.name = name
        self._reduction = reduction

    def __call__(self, inputs: Sequence[Tensor]) -> Tensor:
        out_shape = [] if self._reduction else list(inputs[0].shape)
        return _C._jit.launch(self.name, list(inputs), out_shape)

    def __repr__(self) -> str:
        return f"DispatchedKernel({self.name})"


class HostCodeFuser:
    def __init__(self, device_type: str) -> None:
        self.device_type = device_type

    def compile(self, graph: Graph) -> FusedKernel | None:
        if not _C._jit.has_host_launcher(self.device_type):
            raise RuntimeError(
                f"device type '{self.device_type}' registered a host-code fuser but no C++ "
                "FusedLauncher (torch_core::jit::FusedLaunchers::register_launcher)"
            )
        try:
            compiler = find_host_compiler()
        except CompilerUnavailable as error:
            warn_once(f"torch_core.jit: {error}; fused functions run eagerly")
            return None
        library = kernel_cache().build(emit_host_source(graph), compiler)
        name = graph.kernel_name
        _C._jit.register_host_kernel(name, self.device_type, str(library), name)
        return DispatchedKernel(name, graph.reduction is not None)

    def __repr__(self) -> str:
        return f"HostCodeFuser({self.device_type!r})"
