"""torch.utils.benchmark: Timer runs Python statements against the wall clock; Measurement reports per-run
times and prints as torch prints it."""
import pytest

from mindtorch_v2.utils.benchmark import Measurement, TaskSpec, Timer, select_unit


def test_timeit_is_one_measurement_of_number_runs_with_per_run_times():
    calls = []
    m = Timer(stmt="f()", globals={"f": lambda: calls.append(1)}).timeit(50)
    assert isinstance(m, Measurement)
    assert m.number_per_run == 50 and len(m.raw_times) == 1
    assert m.times == [m.raw_times[0] / 50] and m.median == m.mean == m.times[0]
    assert len(calls) == 50 + 2  # the warm-up runs max(50 // 100, 2) times first


def test_setup_runs_and_globals_are_visible_to_the_statement():
    m = Timer(stmt="assert a + b == 3", setup="b = 2", globals={"a": 1}).timeit(3)
    assert m.stmt == "assert a + b == 3"
    with pytest.raises(NameError):
        Timer("undefined_name").timeit(1)


def test_repr_of_a_single_measurement_follows_torch():
    m = Measurement(number_per_run=7, raw_times=[7 * 2.5e-6], task_spec=TaskSpec("a + b", "b = 2", label="L",
                                                                                sub_label="s", description="d"))
    lines = repr(m).splitlines()
    assert lines[0].startswith("<") and "Measurement object at" in lines[0]
    assert lines[1:] == ["L: s", "d", "setup: b = 2", "  2.50 us", "  1 measurement, 7 runs , 1 thread"]


def test_repr_of_several_measurements_shows_median_iqr_and_the_spread_warning():
    m = Measurement(number_per_run=10, raw_times=[10e-3, 10e-3, 20e-3, 30e-3], task_spec=TaskSpec("x", "pass"))
    lines = repr(m).splitlines()
    assert lines[1:5] == ["x", "  Median: 1.50 ms", "  IQR:    1.25 ms (1.00 to 2.25)",
                          "  4 measurements, 10 runs per measurement, 1 thread"]
    assert lines[5] == "  WARNING: Interquartile range is 83.3% of the median measurement."
    assert lines[6].strip() == "This suggests significant environmental influence."
    assert not m.meets_confidence(0.5) and m.has_warnings


def test_blocked_autorange_runs_blocks_until_the_minimum_time():
    m = Timer("sum(range(20))").blocked_autorange(min_run_time=0.02)
    assert sum(m.raw_times) >= 0.02 and m.number_per_run >= 1 and m.median > 0


def test_select_unit_scales_to_order_one():
    assert select_unit(3e-9) == ("ns", 1e-9)
    assert select_unit(3e-5) == ("us", 1e-6)
    assert select_unit(0.3) == ("ms", 1e-3)
    assert select_unit(3.0) == ("s", 1.0)
