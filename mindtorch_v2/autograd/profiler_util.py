"""torch.autograd.profiler_util: the profiler's result types (EventList, FunctionEvent, FunctionEventAvg)."""
from ..profiler._events import (MEMORY_EVENT_NAME, OUT_OF_MEMORY_EVENT_NAME, EventList,  # noqa: F401
                                FormattedTimesMixin, FunctionEvent, FunctionEventAvg, Interval, Kernel)

__all__ = ["EventList", "FormattedTimesMixin", "Interval", "Kernel", "FunctionEvent", "FunctionEventAvg"]
