"""What a benchmark ran (TaskSpec) and how long it took (Measurement), printed as torch prints them."""
import textwrap

import numpy as np

__all__ = ["TaskSpec", "Measurement", "select_unit"]

# interquartile range over median above which a measurement is flagged, as torch flags it
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.5


def select_unit(t):
    """(unit, scale) that shows t seconds as a number of order one: ns, us, ms or s."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(np.floor(np.log10(t) / 3)) if t > 0 else -3, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


class TaskSpec:
    """The statement, setup and labels of one benchmark."""

    def __init__(self, stmt, setup, global_setup="", label=None, sub_label=None, description=None, env=None,
                 num_threads=1):
        self.stmt, self.setup, self.global_setup = stmt, setup, global_setup
        self.label, self.sub_label, self.description = label, sub_label, description
        self.env, self.num_threads = env, num_threads

    @property
    def title(self):
        """The label (or the statement) with the sub-label, as torch titles a measurement."""
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self):
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self):
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


class Measurement:
    """raw_times[i] is the wall time of number_per_run runs of the task; times are per run."""

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata

    def __getattr__(self, name):  # stmt, label, num_threads, ... come from the task
        if name != "task_spec" and "task_spec" in self.__dict__ and hasattr(self.task_spec, name):
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    def _quantile(self, q):
        return float(np.quantile(np.asarray(self.times, dtype=np.float64), q))

    @property
    def median(self):
        return self._quantile(0.5)

    @property
    def mean(self):
        return float(np.mean(self.times))

    @property
    def iqr(self):
        return self._quantile(0.75) - self._quantile(0.25)

    @property
    def has_warnings(self):
        return bool(self._warnings())

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    @property
    def significant_figures(self):
        """How many figures of the median are significant given the spread (torch's rule of thumb)."""
        n = len(self.times)
        if n == 1:
            return 1
        std = self.iqr / 1.349  # the interquartile range of a normal distribution in standard deviations
        rel = std / np.sqrt(n) / self.median
        return int(np.clip(np.floor(-np.log10(max(rel * 1.645, 1e-12))), 1, 4))

    def _warnings(self):
        if len(self.times) < 4 or self.meets_confidence(_IQR_WARN_THRESHOLD):
            return ()
        msg = ("This suggests significant environmental influence." if not self.meets_confidence(
            _IQR_GROSS_WARN_THRESHOLD) else "This could indicate system fluctuation.")
        return (f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% of the median "
                f"measurement.\n           {msg}",)

    def __repr__(self):
        n = len(self.times)
        unit, scale = select_unit(self.median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self.median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._quantile(0.25) / scale:.2f} to "
                         f"{self._quantile(0.75) / scale:.2f})")
        threads = self.task_spec.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}")
        lines.extend(self._warnings())
        return "\n".join(lines)
