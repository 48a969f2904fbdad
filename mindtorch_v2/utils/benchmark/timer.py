"""Timer: run a Python statement many times against the wall clock (torch.utils.benchmark.Timer)."""
import enum
import timeit

from .common import Measurement, TaskSpec

__all__ = ["Timer", "Language"]


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Times `stmt` after `setup`, both run in a copy of `globals`."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timeit.default_timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError("only Python statements can be timed here (language=Language.PYTHON)")
        if global_setup:
            raise ValueError("global_setup is a C++ option; it is not supported for Python statements")
        self._globals = dict(globals or {})
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env,
                                   num_threads=num_threads)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)  # a zero reading would divide by zero in the report

    def timeit(self, number=1000000):
        """One measurement of `number` runs, after a warm-up of max(number // 100, 2) runs."""
        self._timeit(max(int(number // 100), 2))
        return Measurement(number_per_run=number, raw_times=[self._timeit(number)], task_spec=self._task_spec)

    def _block_size(self, min_run_time):
        # grow the block tenfold until it takes long enough that the clock's own cost is negligible
        overhead = min(self._timeit(0) for _ in range(5))
        number = 1
        while True:
            taken = self._timeit(number)
            if (overhead / taken <= 1e-4 and taken >= min_run_time / 1000) or taken > min_run_time:
                return number
            number *= 10

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs, sized to outlast the clock's overhead, until min_run_time seconds have passed."""
        number = self._block_size(min_run_time)
        times, total = [], 0.0
        while total < min_run_time or not times:
            t = self._timeit(number)
            total += t
            if callback is not None:
                callback(number, t)
            times.append(t)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Measurements of 0.05 s blocks until the interquartile range is below threshold of the median
        (after at least min_run_time) or max_run_time has passed."""
        number = self._block_size(min_run_time=0.05)
        times, total = [], 0.0
        while total < max_run_time:
            t = self._timeit(number)
            total += t
            if callback is not None:
                callback(number, t)
            times.append(t)
            m = Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)
            if len(times) > 3 and total >= min_run_time and m.meets_confidence(threshold):
                return m
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)
