"""The profiler: every dispatched op, user ranges, and device-side kernel time.

    with torch_core.profiler.profile() as prof:
        with torch_core.profiler.record_function("step"):
            y = (x @ w).relu()
    print(prof.key_averages().table(sort_by="host_time_total"))
    prof.export_chrome_trace("trace.json")   # chrome://tracing or ui.perfetto.dev

Device intervals come from each device type's profiler stubs (registered by
its backend), measured on the stream the kernel ran on.
"""

from torch_core.profiler._events import EventList, FunctionEvent
from torch_core.profiler._profile import ProfilerActivity, profile, record_function

__all__ = ["EventList", "FunctionEvent", "ProfilerActivity", "profile", "record_function"]
