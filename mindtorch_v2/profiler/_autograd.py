"""torch.autograd.profiler's contents: the profiler backend (profile, record_function) and the annotation
contexts (emit_itt, emit_nvtx).

`profile` records the ops, backward nodes and record_function ranges of the thread that enters it
(mindtorch_v2/profiler/_recorder.py) and presents them as PyTorch does: `function_events`,
`key_averages()`, `table()`, `export_chrome_trace()`. torch.profiler.profile drives one of these per
profiling cycle. Only CPU activity exists here: asking for a device warns and profiles the CPU alone, as
PyTorch does on a machine without that device.
"""
import gzip
import os
import shutil
import tempfile
import time
import uuid
from warnings import warn

from ._events import (DeviceType, EventList, FormattedTimesMixin, FunctionEvent,  # noqa: F401
                                FunctionEventAvg, Interval, Kernel, MEMORY_EVENT_NAME,
                                OUT_OF_MEMORY_EVENT_NAME, ProfilerActivity, write_kineto_trace)
from ._recorder import Session, _tls, record_function  # noqa: F401

__all__ = ["profile", "record_function", "emit_itt", "emit_nvtx", "load_nvprof", "EnforceUnique",
           "parse_nvprof_trace", "kineto_available", "EventList", "FunctionEvent", "FunctionEventAvg",
           "KinetoStepTracker"]


def _supported_activities():
    return {ProfilerActivity.CPU}


def kineto_available():
    """True: the CPU tracer (PyTorch's kineto path) is what this profiler implements."""
    return True


_VALID_DEVICES = ("cuda", "xpu", "mtia", "hpu")


def _device_available(name):
    from .. import cuda, xpu
    module = {"cuda": cuda, "xpu": xpu}.get(name)
    return module is not None and module.is_available()


class profile:
    """Context manager recording this thread's ops; holds the results (see module docstring)."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None,
                 post_processing_timeout_s=None, activity_filters=None):
        self.enabled = enabled
        if not enabled:
            return
        self.use_cuda = use_cuda
        if use_cuda:
            warn("The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` instead.",
                 FutureWarning, stacklevel=2)
            use_device = "cuda"
        self.use_device = use_device
        self._function_events = None
        self._old_function_events = None
        self.entered = False
        self.record_shapes = record_shapes or with_flops
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.experimental_config = experimental_config
        self.custom_trace_id_callback = custom_trace_id_callback
        self.post_processing_timeout_s = post_processing_timeout_s
        self.activity_filters = activity_filters or {}
        self.trace_id = ""
        self.profiling_start_time_ns = self.profiling_end_time_ns = 0
        self._session = None
        if not use_cpu and not use_kineto:
            raise AssertionError("Device-only events supported only with Kineto (use_kineto=True)")
        if self.use_device is not None:
            if self.use_device not in _VALID_DEVICES:
                warn(f"The {self.use_device} is not a valid device option.", stacklevel=2)
                self.use_device = None
            elif not _device_available(self.use_device):
                warn(f"{self.use_device.upper()} is not available, disabling {self.use_device.upper()} profiling",
                     stacklevel=2)
                self.use_cuda = False
                self.use_device = None
        self.kineto_activities = {ProfilerActivity.CPU} if use_cpu else set()
        if not self.kineto_activities:
            raise AssertionError("No activities specified for the profiler")
        if post_processing_timeout_s is not None and post_processing_timeout_s < 0:
            raise ValueError("post_processing_timeout_s must be non-negative")

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._prepare_trace()
        self._start_trace()
        return self

    def _prepare_trace(self):
        self.entered = True
        self.trace_id = self.custom_trace_id_callback() if self.custom_trace_id_callback else \
            uuid.uuid4().hex.upper()

    def _start_trace(self):
        self.entered = True
        self._session = Session(self.record_shapes, self.profile_memory, self.with_stack, self.with_flops)
        self._session.start()
        self.profiling_start_time_ns = time.time_ns()

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return False
        session = self._session
        if session is None or not session.running:  # PyTorch only logs "no active profiling session"
            return False
        session.stop()
        self.profiling_end_time_ns = time.time_ns()
        if self._function_events and self.acc_events:
            self._old_function_events = self._function_events
        self._function_events = session.events(self.use_device)
        if self._old_function_events and self.acc_events:
            self._function_events.extend(self._old_function_events)
            self._old_function_events = None
        return False

    def __repr__(self):
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self._function_events)

    def __str__(self):
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self._function_events)

    @property
    def function_events(self):
        if self._function_events is None:
            return EventList([], use_device=self.use_device, profile_memory=self.profile_memory,
                             with_flops=self.with_flops)
        return self._function_events

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        """The summary table of the recorded events (see EventList.table)."""
        return self.function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width, max_shapes_column_width=max_shapes_column_width,
            header=header, top_level_events_only=top_level_events_only)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """Events averaged per name (and input shapes / stack): an EventList of FunctionEventAvg."""
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def total_average(self):
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        """Total time spent on CPU: the sum of every event's self time."""
        return self.function_events.self_cpu_time_total

    def export_chrome_trace(self, path, metadata=None, use_python_export=False):
        """Write the events as a Chrome trace (chrome://tracing, Perfetto); a '.gz' path is gzipped."""
        path = os.fspath(path)
        meta = {"trace_id": self.trace_id, **(metadata or {})}
        if path.endswith(".gz"):
            with tempfile.NamedTemporaryFile("w+b", suffix=".json", delete=False) as fp:
                tmp = fp.name
            try:
                self._write_trace(tmp, meta)
                with open(tmp, "rb") as fin, gzip.open(path, "wb") as fout:
                    shutil.copyfileobj(fin, fout)
            finally:
                os.unlink(tmp)
        else:
            self._write_trace(path, meta)

    def _write_trace(self, path, metadata):
        base = (self.profiling_start_time_ns // 1_000_000_000) * 1_000_000_000
        events = self.function_events
        offset_us = (self.profiling_start_time_ns - base) / 1000.0
        write_kineto_trace(path, events, metadata, os.getpid(), base, offset_us)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        return self.function_events.export_stacks(path, metric)

    def toggle_collection_dynamic(self, enabled, activities):
        """Pause (enabled=False) or resume CPU op collection of this profile."""
        if ProfilerActivity.CPU not in set(activities) or self._session is None:
            return
        session = self._session
        if enabled and session.paused and session.running:
            session.paused = False
            _tls.session = session
        elif not enabled and not session.paused and _tls.session is session:
            session.paused = True
            _tls.session = session.outer


class _Annotation:
    """A profiler-tool annotation context (ITT, NVTX): not reentrant, inert when disabled."""

    _tool = None

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError(f"{self._tool} annotation context manager is not reentrant")
        self.entered = True
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        return False


class emit_itt(_Annotation):
    """Annotate ops with Intel ITT ranges for VTune. No ITT runtime here: a context that only checks
    its use (not reentrant), as PyTorch's does when VTune is not collecting."""

    _tool = "ITT"


class emit_nvtx(_Annotation):
    """Annotate ops with NVTX ranges for nvprof/Nsight. It synchronizes CUDA on entry and exit, so without
    CUDA it raises what torch.cuda.synchronize() raises, as PyTorch's CPU-only build does."""

    _tool = "NVTX"

    def __enter__(self):
        out = super().__enter__()
        if self.enabled:
            from .. import cuda
            cuda.synchronize()
        return out

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self.enabled:
            from .. import cuda
            cuda.synchronize()
        return False


def load_nvprof(path):
    """Events of an nvprof trace: needs nvprof's SQLite output and CUDA, neither of which exists here."""
    return EventList(parse_nvprof_trace(path))


def parse_nvprof_trace(path):
    raise RuntimeError("parse_nvprof_trace: nvprof traces come from CUDA runs; this build has no CUDA")


class EnforceUnique:
    """Raises if a key is seen more than once."""

    def __init__(self):
        self.seen = set()

    def see(self, *key):
        if key in self.seen:
            raise RuntimeError("duplicate key: " + str(key))
        self.seen.add(key)


class KinetoStepTracker:
    """Global step count shared by the profiler and optimizers (PyTorch's kineto step hook)."""

    _current_step = 0
    _step_dict = {}

    @classmethod
    def init_step_count(cls, requester):
        cls._step_dict[requester] = cls._current_step

    @classmethod
    def erase_step_count(cls, requester):
        return cls._step_dict.pop(requester, None) is not None

    @classmethod
    def increment_step(cls, requester):
        if requester not in cls._step_dict:
            cls.init_step_count(requester)
        cls._step_dict[requester] += 1
        new_step = max(cls._step_dict.values())
        if new_step > cls._current_step:
            cls._current_step = new_step
        return cls._current_step

    @classmethod
    def current_step(cls):
        return cls._current_step
