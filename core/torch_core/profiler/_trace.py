"""Chrome trace (chrome://tracing, ui.perfetto.dev) of a profile: host and device tracks."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from torch_core.profiler._events import FunctionEvent

_HOST_PID = 0


def _device_pid(device: str, devices: list[str]) -> int:
    return 1 + devices.index(device)


def trace_events(events: list[FunctionEvent], origin_ns: int) -> list[dict]:
    """Complete ("X") events per host thread and per device stream, plus flow
    arrows ("s"/"f") from each op's launch to its kernel."""
    devices = sorted({e.device for e in events if e.device_start_ns >= 0})
    out: list[dict] = [
        {"ph": "M", "name": "process_name", "pid": _HOST_PID, "args": {"name": "host"}},
    ]
    for d in devices:
        pid = _device_pid(d, devices)
        out.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": d}})
    for e in events:
        host = {
            "ph": "X",
            "name": e.name,
            "cat": "user_annotation" if e.kind == "user" else "op",
            "pid": _HOST_PID,
            "tid": e.thread,
            "ts": (e.host_start_ns - origin_ns) / 1000,
            "dur": e.host_time_ns / 1000,
            "args": {"input_shapes": [list(s) for s in e.input_shapes], "device": e.device},
        }
        out.append(host)
        if e.device_start_ns < 0:
            continue
        pid = _device_pid(e.device, devices)
        start = (e.device_start_ns - origin_ns) / 1000
        out.append({
            "ph": "X", "name": e.name, "cat": "kernel", "pid": pid, "tid": e.stream,
            "ts": start, "dur": e.device_time_ns / 1000,
            "args": {"correlation": e.correlation, "stream": e.stream},
        })  # fmt: skip
        flow = {"name": "launch", "cat": "launch", "id": e.correlation}
        out.append({**flow, "ph": "s", "pid": _HOST_PID, "tid": e.thread, "ts": host["ts"]})
        out.append({**flow, "ph": "f", "bp": "e", "pid": pid, "tid": e.stream, "ts": start})
    return out


def write_chrome_trace(path: str | os.PathLike[str], events: list[FunctionEvent]) -> None:
    """Writes the trace atomically: a reader never sees half a file."""
    origin = min((e.host_start_ns for e in events), default=0)
    document = {"traceEvents": trace_events(events, origin), "displayTimeUnit": "ms"}
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(document, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
