"""torch.utils.benchmark: time Python statements (Timer) and report the runs (Measurement)."""
from .common import Measurement, TaskSpec, select_unit  # noqa: F401
from .timer import Language, Timer  # noqa: F401

__all__ = ["Timer", "Measurement", "TaskSpec", "Language", "select_unit"]
