"""Every primitive in the registry has sample inputs, and every sample names a primitive."""
import samples
from mindtorch_v2 import core


def test_every_primitive_has_samples():
    registered = samples.load_all()
    missing = sorted(set(core.primitives()) - set(registered))
    assert not missing, f"primitives without samples in properties/samples: {', '.join(missing)}"


def test_every_sample_names_a_primitive():
    registered = samples.load_all()
    unknown = sorted(set(registered) - set(core.primitives()))
    assert not unknown, f"samples registered for names that are not primitives: {', '.join(unknown)}"
