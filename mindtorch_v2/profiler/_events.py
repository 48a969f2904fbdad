"""Profiler results as PyTorch exposes them (torch.autograd.profiler_util): FunctionEvent, FunctionEventAvg,
EventList with key_averages / table / export_chrome_trace, and the enums they carry.

Times are microseconds (floats) from the start of the profiling window. An event's total CPU time is its
interval; its self time subtracts its direct children, which the recorder links while it runs (an op bound
inside a record_function range, a backward node's primitives inside the node).
"""
import enum
import json
import math
import os
from collections import defaultdict

__all__ = ["DeviceType", "EventList", "FormattedTimesMixin", "FunctionEvent", "FunctionEventAvg", "Interval",
           "Kernel", "MEMORY_EVENT_NAME", "OUT_OF_MEMORY_EVENT_NAME", "ProfilerActivity", "RecordScope"]

MEMORY_EVENT_NAME = "[memory]"
OUT_OF_MEMORY_EVENT_NAME = "[OutOfMemory]"


class ProfilerActivity(enum.Enum):
    """Activity groups a profiler can trace; this build traces CPU only (supported_activities())."""
    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5

    def __int__(self):
        return self.value

    def __str__(self):
        return f"ProfilerActivity.{self.name}"


class DeviceType(enum.Enum):
    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20

    def __int__(self):
        return self.value

    def __str__(self):
        return f"DeviceType.{self.name}"


class RecordScope(enum.Enum):
    FUNCTION = 0
    BACKWARD_FUNCTION = 1
    TORCHSCRIPT_FUNCTION = 2
    KERNEL_FUNCTION_DTYPE = 3
    CUSTOM_CLASS = 4
    BUILD_FEATURE = 5
    LITE_INTERPRETER = 6
    USER_SCOPE = 7
    STATIC_RUNTIME_OP = 8
    STATIC_RUNTIME_MODEL = 9

    def __int__(self):
        return self.value


def _format_time(time_us):
    """'1.234s', '5.678ms' or '9.000us', as PyTorch prints times."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes):
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _time_str(name):
    return property(lambda self: _format_time(getattr(self, name)))


class FormattedTimesMixin:
    """cpu_time (the average per call) and the *_str formatted forms shared by events and averages."""

    cpu_time_str = _time_str("cpu_time")
    device_time_str = _time_str("device_time")
    cpu_time_total_str = _time_str("cpu_time_total")
    device_time_total_str = _time_str("device_time_total")
    self_cpu_time_total_str = _time_str("self_cpu_time_total")
    self_device_time_total_str = _time_str("self_device_time_total")

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    @property
    def cuda_time(self):
        return self.device_time


class Interval:
    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        """The length of the interval in microseconds."""
        return self.end - self.start


class Kernel(tuple):
    """(name, device, duration): device kernels an op launched; always empty on CPU."""

    def __new__(cls, name, device, duration):
        return super().__new__(cls, (name, device, duration))


class FunctionEvent(FormattedTimesMixin):
    """One profiled range: an operator, a backward node, or a record_function block."""

    def __init__(self, id, name, thread, start_us, end_us, overload_name=None, fwd_thread=None, input_shapes=None,
                 stack=None, scope=0, use_device=None, cpu_memory_usage=0, device_memory_usage=0, is_async=False,
                 is_remote=False, sequence_nr=-1, node_id=-1, device_type=DeviceType.CPU, device_index=0,
                 device_resource_id=None, is_legacy=False, flops=None, trace_name=None, concrete_inputs=None,
                 kwinputs=None, is_user_annotation=False, input_dtypes=None):
        self.id = id
        self.node_id = node_id
        self.name = name
        self.overload_name = overload_name
        self.trace_name = trace_name if trace_name is not None else name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels = []
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = None
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.input_dtypes = input_dtypes if input_dtypes is not None else []
        self.concrete_inputs = concrete_inputs if concrete_inputs is not None else []
        self.kwinputs = kwinputs if kwinputs is not None else {}
        self.stack = stack if stack is not None else []
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.device_resource_id = thread if device_resource_id is None else device_resource_id
        self.is_legacy = is_legacy
        self.flops = flops
        self.is_user_annotation = is_user_annotation
        self.self_cpu_percent = -1
        self.total_cpu_percent = -1
        self.total_device_percent = -1

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us() if self.device_type == DeviceType.CPU else 0

    @property
    def self_cpu_time_total(self):
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.cpu_memory_usage - sum(child.cpu_memory_usage for child in self.cpu_children)

    # no device activity is traced: device figures are 0, as PyTorch reports them for a CPU-only profile
    device_time_total = 0
    self_device_time_total = 0
    self_device_memory_usage = 0
    cuda_time_total = 0
    self_cuda_time_total = 0
    self_cuda_memory_usage = 0

    def __repr__(self):
        device_name = self.use_device
        return (
            f"<FunctionEvent id={self.id} name={self.name} overload_name={self.overload_name} "
            f"device_type={self.device_type} node_id={self.node_id} cpu_time={self.cpu_time_str} "
            f"start_us={self.time_range.start} end_us={self.time_range.end} "
            f"cpu_children={[child.id for child in self.cpu_children]} {device_name}_time={self.device_time_str} "
            f"name={self.name} thread={self.thread} input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage} {device_name}_memory_usage={self.device_memory_usage} "
            f"is_async={self.is_async} is_remote={self.is_remote} seq_nr={self.sequence_nr} "
            f"is_legacy={self.is_legacy}>")


class FunctionEventAvg(FormattedTimesMixin):
    """Statistics summed over the events of one key (name, and input shapes when grouped by them)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0
        self.device_time_total = 0
        self.self_cpu_time_total = 0
        self.self_device_time_total = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.is_user_annotation = False
        self.flops = 0

    def add(self, other):
        """Accumulate another event (or average) of the same key into this one; returns self."""
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError("Expected other to be a FunctionEvent or FunctionEventAvg")
        if self.key is None:
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.is_remote = other.is_remote
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.overload_name = other.overload_name
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
            self.use_device = other.use_device
            self.is_user_annotation = other.is_user_annotation
        elif other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        if self.flops is None:
            self.flops = other.flops
        elif other.flops is not None:
            self.flops += other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        device_name = "cuda" if not self.use_device else self.use_device
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
            f"cpu_time={self.cpu_time_str}  self_{device_name}_time={self.self_device_time_total_str} "
            f"{device_name}_time={self.device_time_str} input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage} {device_name}_memory_usage={self.device_memory_usage}>")


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with PyTorch's table, averaging and trace export."""

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False, **kwargs):
        super().__init__(*args, **kwargs)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._tree_built = True

    def __str__(self):
        return self.table()

    @property
    def self_cpu_time_total(self):
        return sum(event.self_cpu_time_total for event in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """The events as PyTorch's text table, sorted (descending) by the attribute `sort_by`."""
        return _build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                            max_src_column_width=max_src_column_width,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, with_flops=self._with_flops,
                            profile_memory=self._profile_memory, top_level_events_only=top_level_events_only,
                            time_unit=time_unit)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        """An EventList of FunctionEventAvg, one per event name (and input shapes / stack when asked)."""
        stats = defaultdict(FunctionEventAvg)
        for evt in self:
            key = [str(evt.key), str(evt.node_id), str(evt.device_type), str(evt.is_legacy),
                   str(evt.is_user_annotation)]
            if group_by_overload_name:
                key.append(evt.overload_name)
            if group_by_input_shapes:
                key.append(str(evt.input_shapes))
            if group_by_stack_n > 0:
                key += evt.stack[:group_by_stack_n]
            stats[tuple(key)].add(evt)
        averages = EventList(stats.values(), use_device=self._use_device, profile_memory=self._profile_memory,
                             with_flops=self._with_flops)
        for evt in averages:
            evt.stack = evt.stack[:group_by_stack_n]
            if not group_by_input_shapes:
                evt.input_shapes = ""
            if not group_by_overload_name:
                evt.overload_name = ""
        return averages

    def total_average(self):
        """One FunctionEventAvg (key 'Total') summing every event."""
        total = FunctionEventAvg()
        for evt in self:
            total.key = None  # sum across keys
            total.add(evt)
        total.key = "Total"
        return total

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (JSON array of complete 'X' events) to `path`."""
        events = [{"name": evt.trace_name, "ph": "X", "ts": evt.time_range.start,
                   "dur": evt.time_range.elapsed_us(), "tid": evt.thread, "pid": "CPU functions", "args": {}}
                  for evt in self if evt.trace_name is not None]
        with open(path, "w") as f:
            json.dump(events, f)

    def supported_export_stacks_metrics(self):
        return ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total",
                "self_privateuse1_time_total"]

    def export_stacks(self, path, metric):
        """Write 'frame;frame;... value' lines (flame-graph input) for events that recorded a stack."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError("metric should be one of: " + str(self.supported_export_stacks_metrics()))
        attr = metric.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")
        translate = str.maketrans(" ;\t\n", "____")
        with open(path, "w") as f:
            for evt in self:
                if evt.stack:
                    value = getattr(evt, attr)
                    if int(value) > 0:
                        frames = ";".join(entry.translate(translate) for entry in reversed(evt.stack))
                        f.write(f"{frames} {int(value)}\n")


def _sort_attr(sort_by):
    return sort_by.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")


def _build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                 max_name_column_width=55, max_shapes_column_width=80, with_flops=False, profile_memory=False,
                 top_level_events_only=False, time_unit=None):
    """PyTorch's summary table (torch.autograd.profiler_util._build_table) for CPU events."""
    if len(events) == 0:
        return ""
    has_input_shapes = any(evt.input_shapes is not None and len(evt.input_shapes) > 0 for evt in events)
    has_overload_names = any(evt.overload_name for evt in events)
    if sort_by is not None:
        attr = _sort_attr(sort_by)
        events = sorted(events, key=lambda evt: getattr(evt, attr), reverse=True)

    name_width = max(len(evt.key) for evt in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(evt.input_shapes)) for evt in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    stacks = [evt.stack for evt in events if evt.stack]
    src_width = None
    if stacks:
        src_width = max(len(entry) for stack in stacks for entry in stack) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)

    width = 12
    headers = ["Name"]
    widths = [name_width]
    if has_overload_names:
        headers.append("Overload Name")
        widths.append(name_width)
    headers += ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    append_node_id = any(evt.node_id != -1 for evt in events)
    if append_node_id:
        headers.append("Node ID")
    widths += [width] * (len(headers) - len(widths))
    aligns = [">"] * len(headers)
    if has_input_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
        aligns.append(">")
    if stacks:
        headers.append("Source Location")
        widths.append(src_width)
        aligns.append("<")
    if with_flops:
        raw_flops = [evt.flops for evt in events if evt.flops is not None and evt.flops > 0]
        if raw_flops:
            flop_units = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]
            log_flops = max(0, min(math.log10(min(raw_flops)) / 3, float(len(flop_units) - 1)))
            flops_scale = pow(10, math.floor(log_flops) * -3.0)
            headers.append(f"Total {flop_units[int(log_flops)]}")
            widths.append(width)
            aligns.append(">")
        else:
            with_flops = False

    row_format = "".join("{: " + a + str(w) + "}  " for a, w in zip(aligns, widths))
    header_sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    def fmt_time(time_us):
        if time_unit == "s":
            return f"{time_us / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{time_us / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{time_us:.3f}us"
        return _format_time(time_us)

    def trim_path(path):
        if len(path) > src_width:
            path = path[len(path) - src_width:]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    sum_self_cpu = sum(evt.self_cpu_time_total for evt in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [header_sep, row_format.format(*headers), header_sep]
    shown = 0
    for evt in events:
        if shown == row_limit:
            break
        if top_level_events_only and evt.cpu_parent is not None:
            continue
        shown += 1
        name = evt.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        evt.self_cpu_percent = _format_time_share(evt.self_cpu_time_total, sum_self_cpu)
        evt.total_cpu_percent = _format_time_share(evt.cpu_time_total, sum_self_cpu) if not evt.is_async else 0
        row = [name]
        if has_overload_names:
            overload = evt.overload_name or ""
            if max_name_column_width is not None and len(overload) >= max_name_column_width - 3:
                overload = overload[:max_name_column_width - 3] + "..."
            row.append(overload)
        row += [evt.self_cpu_percent, fmt_time(evt.self_cpu_time_total), evt.total_cpu_percent,
                fmt_time(evt.cpu_time_total), fmt_time(evt.cpu_time)]
        if profile_memory:
            row += [_format_memory(evt.cpu_memory_usage), _format_memory(evt.self_cpu_memory_usage)]
        row.append(evt.count)
        if append_node_id:
            row.append(evt.node_id)
        if has_input_shapes:
            row.append(str(evt.input_shapes)[:shapes_width])
        if stacks:
            row.append(trim_path(evt.stack[0]) if evt.stack else "")
        if with_flops:
            row.append("--" if not evt.flops or evt.flops <= 0 else f"{evt.flops * flops_scale:8.3f}")
        lines.append(row_format.format(*row))
        if stacks:
            blank = [""] * (len(headers) - 1)
            for entry in evt.stack[1:]:
                lines.append(row_format.format(*(blank + [trim_path(entry)])))
            lines.append(row_format.format(*(blank + [""])))
    lines += [header_sep, f"Self CPU time total: {fmt_time(sum_self_cpu)}"]
    return "\n".join(lines) + "\n"


def write_kineto_trace(path, events, metadata, pid, base_time_ns, offset_us=0.0):
    """Write `events` (FunctionEvents) as the Chrome trace JSON PyTorch's kineto profiler writes: a dict
    with metadata and `traceEvents` of complete ('X') events, ts/dur in microseconds."""
    trace = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}},
             {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": "CPU"}}]
    threads = sorted({evt.thread for evt in events})
    for tid in threads:
        trace.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                      "args": {"name": f"thread {tid} (python)"}})
    for idx, evt in enumerate(events):
        args = {"External id": evt.id, "Ev Idx": idx}
        if evt.input_shapes:
            args["Input Dims"] = evt.input_shapes
            args["Input type"] = evt.input_dtypes
        if evt.sequence_nr >= 0:
            args["Sequence number"] = evt.sequence_nr
            args["Fwd thread id"] = evt.fwd_thread if evt.fwd_thread is not None else 0
        if evt.flops:
            args["flops"] = evt.flops
        if evt.cpu_memory_usage:
            args["Allocated bytes"] = evt.cpu_memory_usage
        if evt.stack:
            args["Call stack"] = ";".join(evt.stack)
        trace.append({"ph": "X", "cat": "user_annotation" if evt.is_user_annotation else "cpu_op",
                      "name": evt.trace_name, "pid": pid, "tid": evt.thread,
                      "ts": round(offset_us + evt.time_range.start, 3), "dur": round(evt.time_range.elapsed_us(), 3),
                      "args": args})
    doc = {"schemaVersion": 1, "deviceProperties": [], **metadata, "displayTimeUnit": "ms",
           "baseTimeNanoseconds": base_time_ns, "traceEvents": trace, "traceName": os.fspath(path)}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
