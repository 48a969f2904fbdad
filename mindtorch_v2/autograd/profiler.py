"""torch.autograd.profiler: profile (the per-cycle recorder torch.profiler drives), record_function,
emit_itt, emit_nvtx and the event types; implemented in mindtorch_v2/profiler/."""
from ..profiler._autograd import (EnforceUnique, KinetoStepTracker, emit_itt, emit_nvtx,  # noqa: F401
                                  kineto_available, load_nvprof, parse_nvprof_trace, profile, record_function)
from ..profiler._events import (MEMORY_EVENT_NAME, OUT_OF_MEMORY_EVENT_NAME, DeviceType, EventList,  # noqa: F401
                                FormattedTimesMixin, FunctionEvent, FunctionEventAvg, Interval, Kernel,
                                ProfilerActivity)

__all__ = ["profile", "record_function", "emit_itt", "emit_nvtx", "load_nvprof", "EnforceUnique",
           "parse_nvprof_trace", "kineto_available", "KinetoStepTracker", "EventList", "FunctionEvent",
           "FunctionEventAvg", "DeviceType", "ProfilerActivity"]
