"""torch.profiler and torch.autograd.profiler: events of eager ops, backward nodes and record_function
ranges with real timings, their nesting, key_averages tables, Chrome traces, schedules, and PyTorch's
errors. Timings are only compared with each other (self <= total, children inside parents), never with
fixed numbers."""
import gzip
import json
import threading
import warnings

import pytest

import mindtorch_v2 as torch
from mindtorch_v2.eager import profiler_hooks
from mindtorch_v2.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


def names(events):
    return [e.name for e in events]


def small_step():
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(4, 5)
    with record_function("forward"):
        y = (x @ w).exp().sum()
    y.backward()
    return x


# ---------------------------------------------------------------- events, names, nesting

def test_ops_are_events_named_like_aten_with_counts():
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    with profile() as prof:
        a + b
        a * b
        a * b
        torch.cat([a, b])
    counts = {avg.key: avg.count for avg in prof.key_averages()}
    assert counts["aten::add"] == 1
    assert counts["aten::mul"] == 2
    assert counts["aten::cat"] == 1


def test_record_function_nests_ops_and_self_time_excludes_children():
    with profile() as prof:
        small_step()
    events = prof.events()
    fwd = next(e for e in events if e.name == "forward")
    assert fwd.is_user_annotation and fwd.cpu_parent is None
    children = names(fwd.cpu_children)
    assert children == ["aten::matmul", "aten::exp", "aten::sum"]
    for e in events:
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total
        if e.cpu_parent is not None:  # a child lies inside its parent's interval
            assert e.cpu_parent.time_range.start <= e.time_range.start
            assert e.time_range.end <= e.cpu_parent.time_range.end
    child_total = sum(c.cpu_time_total for c in fwd.cpu_children)
    assert fwd.self_cpu_time_total == pytest.approx(fwd.cpu_time_total - child_total)
    assert prof.key_averages().self_cpu_time_total == pytest.approx(sum(e.self_cpu_time_total for e in events))


def test_nested_record_functions_give_self_and_total_times():
    a = torch.randn(8, 8)
    with profile() as prof:
        with record_function("outer"):
            a @ a
            with record_function("inner"):
                a @ a
                a @ a
    ev = {e.name: e for e in prof.events() if e.name in ("outer", "inner")}
    assert ev["inner"].cpu_parent is ev["outer"]
    assert names(ev["inner"].cpu_children) == ["aten::matmul", "aten::matmul"]
    assert ev["inner"].cpu_time_total <= ev["outer"].cpu_time_total
    assert ev["outer"].self_cpu_time_total < ev["outer"].cpu_time_total
    avgs = {a.key: a for a in prof.key_averages()}
    assert avgs["aten::matmul"].count == 3
    assert avgs["aten::matmul"].cpu_time == pytest.approx(avgs["aten::matmul"].cpu_time_total / 3)


def test_backward_nodes_are_evaluate_function_events_around_the_node():
    with profile() as prof:
        small_step()
    evs = prof.events()
    seen = names(evs)
    for node in ("SumBackward0", "ExpBackward0", "MmBackward0", "torch::autograd::AccumulateGrad"):
        assert f"autograd::engine::evaluate_function: {node}" in seen
        inner = next(e for e in evs if e.name == node)
        assert inner.cpu_parent.name == f"autograd::engine::evaluate_function: {node}"
        assert inner.scope == 1  # RecordScope.BACKWARD_FUNCTION
    # the backward node of an op carries the sequence number of the forward op that recorded it
    fwd_mm = next(e for e in evs if e.name == "aten::matmul")
    bwd_mm = next(e for e in evs if e.name == "MmBackward0")
    assert fwd_mm.sequence_nr == bwd_mm.sequence_nr >= 0


def test_create_graph_backward_shows_the_rule_ops_inside_the_node():
    x = torch.randn(4, requires_grad=True)
    with profile() as prof:
        (g,) = torch.autograd.grad((x * x).sum(), x, create_graph=True)
    node = next(e for e in prof.events() if e.name == "MulBackward0")
    assert "aten::mul" in names(node.cpu_children)


def test_custom_function_node_is_an_event():
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = torch.randn(3, requires_grad=True)
    with profile() as prof:
        Double.apply(x).sum().backward()
    assert "autograd::engine::evaluate_function: DoubleBackward" in names(prof.events())


def test_record_shapes_memory_and_flops():
    a, b = torch.randn(3, 4), torch.randn(4, 5)
    with profile(record_shapes=True, profile_memory=True, with_flops=True) as prof:
        with record_function("block"):
            a @ b
            a.t()
    mm = next(e for e in prof.events() if e.name == "aten::matmul")
    assert mm.input_shapes == [[3, 4], [4, 5]]
    assert mm.cpu_memory_usage == 3 * 5 * 4  # float32 output
    assert mm.flops == 2 * 3 * 5 * 4
    block = next(e for e in prof.events() if e.name == "block")
    assert block.cpu_memory_usage >= mm.cpu_memory_usage
    grouped = prof.key_averages(group_by_input_shape=True)
    assert any(g.key == "aten::matmul" and g.input_shapes == [[3, 4], [4, 5]] for g in grouped)
    table = prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total")
    assert "Input Shapes" in table and "[[3, 4], [4, 5]]" in table
    assert "CPU Mem" in table and "Self CPU Mem" in table and "Total FLOPs" in table


def test_view_ops_allocate_nothing():
    a = torch.randn(6, 4)
    with profile(profile_memory=True) as prof:
        a.reshape(4, 6).sum()
    for e in prof.events():
        if e.name == "aten::reshape":
            assert e.cpu_memory_usage == 0


def test_names_without_aten_counterpart_and_renamed_primitives():
    from mindtorch_v2.profiler._names import event_name
    from mindtorch_v2 import core
    assert event_name(core.add_p, {}) == "aten::add"
    assert event_name(core.concatenate_p, {}) == "aten::cat"
    assert event_name(core.arccos_p, {}) == "aten::acos"
    assert event_name(core.matmul_p, {}) == "aten::matmul"


# ---------------------------------------------------------------- tables

def test_table_lists_ops_sorted_with_pytorch_columns_and_footer():
    with profile() as prof:
        small_step()
    avgs = prof.key_averages()
    table = avgs.table(sort_by="cpu_time_total", row_limit=5)
    lines = table.splitlines()
    header = lines[1]
    for col in ("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"):
        assert col in header
    assert lines[-1].startswith("Self CPU time total: ")
    rows = lines[3:-2]
    assert len(rows) == 5
    name_width = len(lines[0].split("  ")[0])
    ordered = sorted(avgs, key=lambda a: a.cpu_time_total, reverse=True)[:5]
    for row, avg in zip(rows, ordered):
        shown = avg.key if len(avg.key) < 52 else avg.key[:52] + "..."
        assert row[:name_width].strip() == shown
    by_count = avgs.table(sort_by="count", row_limit=1).splitlines()[3]
    assert max(a.count for a in avgs) == int(by_count.split()[-1])
    self_sorted = avgs.table(sort_by="self_cpu_time_total")
    assert "aten::matmul" in self_sorted and "forward" in self_sorted


def test_table_format_matches_pytorch_exactly_for_given_events():
    from mindtorch_v2.autograd.profiler_util import EventList, FunctionEvent
    outer = FunctionEvent(id=1, name="outer", thread=1, start_us=0, end_us=1000.0)
    mm1 = FunctionEvent(id=2, name="aten::mm", thread=1, start_us=10, end_us=400.5)
    mm2 = FunctionEvent(id=3, name="aten::mm", thread=1, start_us=500, end_us=900.25)
    for child in (mm1, mm2):
        outer.append_cpu_child(child)
        child.set_cpu_parent(outer)
    table = EventList([outer, mm1, mm2]).key_averages().table(sort_by="self_cpu_time_total")
    # printed by PyTorch 2.13 for the same events (torch.autograd.profiler_util)
    expected = (
        "------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
        "        Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n"
        "------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
        "    aten::mm        79.08%     790.750us        79.08%     790.750us     395.375us             2  \n"
        "       outer        20.93%     209.250us       100.00%       1.000ms       1.000ms             1  \n"
        "------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
        "Self CPU time total: 1.000ms\n")
    assert table == expected


def test_function_event_avg_fields():
    with profile(record_shapes=True) as prof:
        small_step()
    avg = next(a for a in prof.key_averages() if a.key == "aten::exp")
    assert avg.count == 1
    assert avg.cpu_time_total >= avg.self_cpu_time_total > 0
    assert avg.cpu_time == avg.cpu_time_total
    assert avg.input_shapes == ""  # not grouped by shapes
    assert "aten::exp" in repr(avg)
    total = prof.events().total_average()
    assert total.key == "Total" and total.count == len(prof.events())


# ---------------------------------------------------------------- chrome trace

def test_export_chrome_trace_is_valid_json_with_the_events(tmp_path):
    with profile(record_shapes=True) as prof:
        small_step()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    spans = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert [e["name"] for e in spans] == names(prof.events())
    for e in spans:
        assert e["dur"] >= 0 and isinstance(e["ts"], (int, float)) and e["cat"] in ("cpu_op", "user_annotation")
    assert next(e for e in spans if e["name"] == "forward")["cat"] == "user_annotation"
    assert doc["record_shapes"] == 1


def test_export_chrome_trace_gz_and_event_list_export(tmp_path):
    with profile() as prof:
        small_step()
    gz = tmp_path / "trace.json.gz"
    prof.export_chrome_trace(str(gz))
    with gzip.open(gz, "rt") as f:
        assert json.load(f)["traceEvents"]
    plain = tmp_path / "events.json"
    prof.events().export_chrome_trace(str(plain))
    assert [e["name"] for e in json.loads(plain.read_text())] == names(prof.events())


def test_tensorboard_trace_handler_writes_a_trace_per_cycle(tmp_path):
    handler = torch.profiler.tensorboard_trace_handler(str(tmp_path / "log"), worker_name="w0")
    warnings.filterwarnings("ignore", message="Warning: Profiler clears events")  # once per process
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=2), on_trace_ready=handler) as prof:
        for _ in range(5):
            torch.randn(3) * 2
            prof.step()
    files = sorted((tmp_path / "log").iterdir())
    assert len(files) == 2
    for f in files:
        assert f.name.startswith("w0.") and f.name.endswith(".pt.trace.json")
        assert any(e.get("name") == "aten::mul" for e in json.loads(f.read_text())["traceEvents"])


# ---------------------------------------------------------------- schedule and steps

def test_schedule_actions_follow_pytorch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1)
    A = ProfilerAction
    assert [s(i) for i in range(8)] == [A.NONE, A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE, A.NONE, A.NONE,
                                        A.NONE]
    s = schedule(wait=1, warmup=1, active=2)
    assert [s(i) for i in range(8)] == [A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE] * 2
    with pytest.warns(UserWarning, match="won't be using warmup"):
        schedule(wait=1, warmup=0, active=1)
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        schedule(wait=1, warmup=1, active=0)


def test_steps_record_only_in_active_phases():
    traces = []
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=lambda p: traces.append(names(p.events()))) as prof:
        for i in range(6):
            with record_function(f"it{i}"):
                torch.randn(2) + 1
            prof.step()
    assert len(traces) == 1
    assert [n for n in traces[0] if n.startswith("it")] == ["it2", "it3"]
    assert traces[0].count("ProfilerStep*") == 2
    step = next(e for e in prof.events() if e.name == "ProfilerStep*")
    assert step.trace_name == "ProfilerStep#2"
    assert names(step.cpu_children) == ["it2"]


def test_start_stop_step_without_context_manager():
    prof = profile(schedule=schedule(wait=0, warmup=1, active=1))
    prof.start()
    torch.randn(2) * 3      # warmup: not recorded
    prof.step()
    torch.randn(2) - 3      # recorded
    prof.stop()
    got = names(prof.events())
    assert "aten::sub" in got and "aten::mul" not in got


# ---------------------------------------------------------------- state, threads, errors

def test_record_function_without_profiler_is_a_noop_and_a_decorator():
    @record_function("decorated")
    def f(x):
        return x * 2

    with record_function("label") as rf:
        out = f(torch.ones(2))
    assert out.tolist() == [2.0, 2.0] and rf.name == "label"
    assert profiler_hooks.op is None and profiler_hooks.node is None  # eager runs unhooked
    with profile() as prof:
        f(torch.ones(2))
        f(torch.ones(2))
    dec = [e for e in prof.events() if e.name == "decorated"]
    assert len(dec) == 2 and all(names(e.cpu_children) == ["aten::mul"] for e in dec)
    assert profiler_hooks.op is None  # uninstalled once the last profiler stops


def test_profiler_is_per_thread():
    results = []
    with profile() as prof:
        t = threading.Thread(target=lambda: results.append(torch.ones(3) * 7))
        t.start()
        t.join()
        torch.ones(2) + 1
    assert results[0].tolist() == [7.0, 7.0, 7.0]
    assert names(prof.events()) == ["aten::add"]

    def other_thread_profile():
        with profile() as p:
            torch.ones(2) - 1
        results.append(names(p.events()))

    with profile() as prof:
        t = threading.Thread(target=other_thread_profile)
        t.start()
        t.join()
        torch.ones(2) * 2
    assert results[-1] == ["aten::sub"]
    assert names(prof.events()) == ["aten::mul"]


def test_errors_as_pytorch():
    with pytest.raises(AssertionError, match="Profiler must be initialized before stopping trace"):
        profile().stop()
    with pytest.raises(AssertionError, match="Profiler must be initialized before accessing events"):
        profile().events()
    with pytest.raises(AssertionError, match="Profiler must be initialized before getting key averages"):
        profile().key_averages()
    with pytest.raises(AssertionError, match="No valid profiler activities found"):
        profile(activities=[])
    with pytest.raises(ValueError, match="specified more than once"):
        profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CPU])
    with profile() as prof:
        torch.ones(2) + 1
    with pytest.raises(AttributeError):
        prof.key_averages().table(sort_by="no_such_column")
    legacy = torch.autograd.profiler.profile()
    with legacy:
        with pytest.raises(RuntimeError, match="not reentrant"):
            legacy.__enter__()
    assert profiler_hooks.op is None


def test_cuda_activity_without_cuda_warns_and_profiles_cpu():
    with pytest.warns(UserWarning, match="CUDA is not available, disabling CUDA profiling"):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            torch.ones(2) + 1
    assert names(prof.events()) == ["aten::add"]
    with pytest.warns(UserWarning, match="CUDA is not available"):
        with pytest.raises(AssertionError, match="No activities specified for the profiler"):
            with profile(activities=[ProfilerActivity.CUDA]):
                pass
    assert torch.profiler.supported_activities() == {ProfilerActivity.CPU}


def test_exception_inside_profile_leaves_eager_unhooked():
    with pytest.raises(ValueError):
        with profile():
            torch.ones(2) + 1
            raise ValueError("boom")
    assert profiler_hooks.op is None and profiler_hooks.node is None


def test_op_error_inside_profile_still_closes_the_event():
    with profile() as prof:
        with pytest.raises(RuntimeError):
            torch.ones(2, 3) + torch.ones(4)
        torch.ones(2) * 2
    evs = prof.events()
    assert names(evs) == ["aten::add", "aten::mul"]
    assert evs[1].cpu_parent is None


# ---------------------------------------------------------------- torch.autograd.profiler

def test_autograd_profiler_profile_and_table():
    with torch.autograd.profiler.profile(record_shapes=True) as prof:
        small_step()
    assert "aten::matmul" in names(prof.function_events)
    table = prof.key_averages().table(sort_by="self_cpu_time_total")
    assert "autograd::engine::evaluate_function: ExpBackward0" in table
    assert prof.self_cpu_time_total > 0
    assert "aten::exp" in str(prof)
    with torch.autograd.profiler.profile(enabled=False) as off:
        torch.ones(2) + 1
    assert off is None
    before = torch.autograd.profiler.profile()
    assert list(before.key_averages()) == []
    assert repr(before) == "<unfinished torch.autograd.profile>"


def test_emit_itt_is_a_context_and_emit_nvtx_needs_cuda():
    with torch.autograd.profiler.emit_itt():
        torch.ones(2) + 1
    assert torch.profiler.itt.is_available() is False
    with torch.profiler.itt.range("r {}", 1):
        torch.profiler.itt.mark("m")
    with torch.autograd.profiler.emit_nvtx(enabled=False):
        pass
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        with torch.autograd.profiler.emit_nvtx():
            pass


def test_toggle_collection_dynamic_pauses_cpu_ops():
    with profile() as prof:
        torch.ones(2) + 1
        prof.toggle_collection_dynamic(False, [ProfilerActivity.CPU])
        torch.ones(2) * 2
        prof.toggle_collection_dynamic(True, [ProfilerActivity.CPU])
        torch.ones(2) - 1
    assert names(prof.events()) == ["aten::add", "aten::sub"]


def test_with_stack_records_user_frames(tmp_path):
    with profile(with_stack=True) as prof:
        torch.ones(2) + 1
    add = prof.events()[0]
    assert add.stack and "test_profiler.py" in add.stack[0]
    assert not any("/mindtorch_v2/" in entry for entry in add.stack)  # the library's frames left out
    out = tmp_path / "stacks.txt"
    prof.export_stacks(str(out), "self_cpu_time_total")
    assert "test_profiler.py" in out.read_text()
