"""Functional forms of the ops (methods and operators live on Tensor)."""

from __future__ import annotations

from typing import Any

from torch_core import _C

Tensor = _C.Tensor


def add(a: Tensor, b: Any) -> Tensor:
    return a.add(b)


def sub(a: Tensor, b: Any) -> Tensor:
    return a.sub(b)


def mul(a: Tensor, b: Any) -> Tensor:
    return a.mul(b)


def div(a: Tensor, b: Any) -> Tensor:
    return a.div(b)


def neg(a: Tensor) -> Tensor:
    return a.neg()


def relu(a: Tensor) -> Tensor:
    return a.relu()


def exp(a: Tensor) -> Tensor:
    return a.exp()


def tanh(a: Tensor) -> Tensor:
    return a.tanh()


def sum(a: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return a.sum(dim, keepdim)


def mean(a: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return a.mean(dim, keepdim)


def max(a: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return a.max(dim, keepdim)


def softmax(a: Tensor, dim: int) -> Tensor:
    return a.softmax(dim)


def matmul(a: Tensor, b: Tensor) -> Tensor:
    return a.matmul(b)
