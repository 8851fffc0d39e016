"""Ring collectives on flat, contiguous host arrays, over a RingTransport.

All-reduce is a reduce-scatter followed by an all-gather, each in world-1
steps moving 1/world of the buffer; chunk bounds are ``i * n // world`` so
sizes need not divide (chunks may even be empty).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from torch_core.distributed.transport import FRAME_BYTES, RingTransport

Reducer = Callable[[np.ndarray, np.ndarray], None]


def bounds(n: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous [start, end) ranges covering n elements; sizes differ by 1 at most."""
    cuts = [i * n // parts for i in range(parts + 1)]
    return list(itertools.pairwise(cuts))


def _bytes(a: np.ndarray) -> memoryview:
    return memoryview(a).cast("B") if a.size else memoryview(b"")


def _reduce_into(
    ring: RingTransport, dst: np.ndarray, send: np.ndarray, reduce: Reducer, what: str
) -> None:
    """Sends ``send`` on while reducing the previous rank's values for ``dst`` into it."""
    itemsize = dst.itemsize

    def on_frame(offset: int, frame: memoryview) -> None:
        first = offset // itemsize
        incoming = np.frombuffer(frame, dtype=dst.dtype)
        reduce(dst[first : first + incoming.size], incoming)

    ring.exchange(_bytes(send), dst.nbytes, on_frame=on_frame, what=what)


def reduce_scatter(
    ring: RingTransport,
    flat: np.ndarray,
    chunks: list[tuple[int, int]],
    reduce: Reducer,
    shift: int,
    what: str,
) -> int:
    """Reduces ``flat`` across ranks, chunk by chunk; returns the chunk complete here.

    Step s sends chunk ``rank + shift - s`` and reduces the previous rank's
    ``rank + shift - s - 1`` in, so rank r ends owning ``(r + shift + 1) % world``.
    """
    w, r = ring.world_size, ring.rank
    for step in range(w - 1):
        send = chunks[(r + shift - step) % w]
        recv = chunks[(r + shift - step - 1) % w]
        _reduce_into(ring, flat[recv[0] : recv[1]], flat[send[0] : send[1]], reduce, what)
    return (r + shift + 1) % w


def all_gather_chunks(
    ring: RingTransport, flat: np.ndarray, chunks: list[tuple[int, int]], owned: int, what: str
) -> None:
    """Each rank holds chunk ``owned`` (its rank plus a shift common to all): spreads them all."""
    w = ring.world_size
    for step in range(w - 1):
        send = chunks[(owned - step) % w]
        recv = chunks[(owned - step - 1) % w]
        ring.exchange(
            _bytes(flat[send[0] : send[1]]),
            (recv[1] - recv[0]) * flat.itemsize,
            recv_into=_bytes(flat[recv[0] : recv[1]]),
            what=what,
        )


def all_reduce(ring: RingTransport, flat: np.ndarray, reduce: Reducer, what: str) -> None:
    if ring.world_size == 1:
        return
    chunks = bounds(flat.size, ring.world_size)
    owned = reduce_scatter(ring, flat, chunks, reduce, 0, what)
    all_gather_chunks(ring, flat, chunks, owned, what)


def broadcast(ring: RingTransport, flat: np.ndarray, src: int, what: str) -> None:
    """A pipelined chain src -> src+1 -> ...: each rank forwards every frame it receives."""
    w, r = ring.world_size, ring.rank
    if w == 1 or flat.size == 0:
        return
    data = _bytes(flat)
    last = (src - 1) % w
    for start in range(0, len(data), FRAME_BYTES):
        frame = data[start : start + FRAME_BYTES]
        if r != src:
            ring.recv_into(frame, what)
        if r != last:
            ring.send(frame, what)


def all_gather(ring: RingTransport, out: np.ndarray, what: str) -> None:
    """``out`` is world equal blocks, block ``rank`` already filled: fills the others."""
    w = ring.world_size
    block = out.size // w
    chunks = [(i * block, (i + 1) * block) for i in range(w)]
    all_gather_chunks(ring, out, chunks, ring.rank, what)


def reduce_scatter_blocks(
    ring: RingTransport, flat: np.ndarray, reduce: Reducer, what: str
) -> tuple[int, int]:
    """``flat`` is world equal blocks; block ``rank`` ends reduced. Returns its bounds."""
    w = ring.world_size
    block = flat.size // w
    chunks = [(i * block, (i + 1) * block) for i in range(w)]
    owned = reduce_scatter(ring, flat, chunks, reduce, -1, what)
    return chunks[owned]
