"""torch.profiler: time every eager op, backward node and record_function range of a thread.

    with torch.profiler.profile(record_shapes=True) as prof:
        with torch.profiler.record_function("forward"):
            loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")

Event names follow PyTorch's (`aten::mm`, `autograd::engine::evaluate_function: MmBackward0`, ...): one
event per primitive an eager op binds; see _names.py for how primitives map to ATen names. CPU activity
only. With no profiler running, eager pays one `is not None` test per op (eager/profiler_hooks.py).
"""
from . import itt  # noqa: F401
from ._autograd import KinetoStepTracker, kineto_available, record_function  # noqa: F401
from ._events import DeviceType, ProfilerActivity, RecordScope  # noqa: F401
from .profiler import (ProfilerAction, _KinetoProfile, profile, schedule, supported_activities,  # noqa: F401
                       tensorboard_trace_handler)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "kineto_available", "DeviceType", "record_function", "RecordScope", "itt"]
