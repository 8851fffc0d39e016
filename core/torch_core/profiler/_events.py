"""Profiled events and their per-name summary table."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class FunctionEvent:
    """One op or user range; times in nanoseconds on the host's steady clock."""

    name: str
    kind: str  # "op" or "user"
    input_shapes: tuple[tuple[int, ...], ...]
    device: str
    stream: int
    thread: int
    host_start_ns: int
    host_end_ns: int
    device_start_ns: int  # -1 when not measured
    device_end_ns: int
    correlation: int

    @property
    def host_time_ns(self) -> int:
        return self.host_end_ns - self.host_start_ns

    @property
    def device_time_ns(self) -> int:
        return self.device_end_ns - self.device_start_ns if self.device_start_ns >= 0 else 0

    @classmethod
    def from_dict(cls, d: dict) -> FunctionEvent:
        return cls(
            name=d["name"],
            kind=d["kind"],
            input_shapes=tuple(tuple(s) for s in d["input_shapes"]),
            device=d["device"],
            stream=d["stream"],
            thread=d["thread"],
            host_start_ns=d["host_start_ns"],
            host_end_ns=d["host_end_ns"],
            device_start_ns=d["device_start_ns"],
            device_end_ns=d["device_end_ns"],
            correlation=d["correlation"],
        )


@dataclass
class Average:
    """All events of one name (and, with group_by_shapes, one input shape list)."""

    name: str
    input_shapes: tuple[tuple[int, ...], ...] | None
    count: int = 0
    host_time_total_ns: int = 0
    device_time_total_ns: int = 0
    devices: set[str] = field(default_factory=set)

    @property
    def host_time_avg_ns(self) -> float:
        return self.host_time_total_ns / self.count if self.count else 0.0


_SORT_KEYS = {
    "count": lambda a: a.count,
    "host_time_total": lambda a: a.host_time_total_ns,
    "host_time_avg": lambda a: a.host_time_avg_ns,
    "device_time_total": lambda a: a.device_time_total_ns,
    "name": lambda a: a.name,
}


def _us(ns: float) -> str:
    return f"{ns / 1000:.3f}us" if ns < 1e6 else f"{ns / 1e6:.3f}ms"


class EventList(list):
    """Per-name aggregates, printable as PyTorch's key_averages() table."""

    def __init__(self, averages: Iterable[Average] = ()) -> None:
        super().__init__(averages)

    @classmethod
    def aggregate(cls, events: Iterable[FunctionEvent], group_by_shapes: bool = False) -> EventList:
        table: dict[tuple, Average] = {}
        for e in events:
            key = (e.name, e.input_shapes if group_by_shapes else None)
            avg = table.setdefault(key, Average(e.name, key[1]))
            avg.count += 1
            avg.host_time_total_ns += e.host_time_ns
            avg.device_time_total_ns += e.device_time_ns
            if e.device:
                avg.devices.add(e.device)
        return cls(table.values())

    def table(self, sort_by: str = "host_time_total", row_limit: int = 100) -> str:
        if sort_by not in _SORT_KEYS:
            raise ValueError(f"sort_by must be one of {sorted(_SORT_KEYS)}, got {sort_by!r}")
        rows = sorted(self, key=_SORT_KEYS[sort_by], reverse=sort_by != "name")[:row_limit]
        header = ["Name", "Count", "Host total", "Host avg", "Device total", "Devices"]
        if any(a.input_shapes is not None for a in rows):
            header.append("Input shapes")
        body = []
        for a in rows:
            row = [
                a.name,
                str(a.count),
                _us(a.host_time_total_ns),
                _us(a.host_time_avg_ns),
                _us(a.device_time_total_ns),
                ",".join(sorted(a.devices)) or "-",
            ]
            if len(header) == 7:
                row.append(str([list(s) for s in a.input_shapes or ()]))
            body.append(row)
        widths = [
            max(len(h), *(len(r[i]) for r in body)) if body else len(h)
            for i, h in enumerate(header)
        ]
        line = "-" * (sum(widths) + 2 * (len(widths) - 1))

        def fmt(cells: list[str]) -> str:
            return "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            )

        return "\n".join([line, fmt(header), line, *(fmt(r) for r in body), line])

    def __str__(self) -> str:
        return self.table()
