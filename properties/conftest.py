"""Hypothesis profiles for the property suite, chosen by the HYPOTHESIS_PROFILE environment variable.

    ci        few derandomized examples: the whole suite in a few minutes on 2 cores
    dev       the default: a few more examples, still quick
    thorough  many examples, for a deliberate hunt
"""
import os

from hypothesis import HealthCheck, settings

_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

settings.register_profile("ci", max_examples=15, derandomize=True, print_blob=True, **_COMMON)
settings.register_profile("dev", max_examples=20, **_COMMON)
settings.register_profile("thorough", max_examples=300, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
