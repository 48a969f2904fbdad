"""Every primitive in the registry has sample inputs, and every sample is for a registered primitive."""
import samples
from mindtorch_v2 import core


def test_every_primitive_has_samples():
    registered = samples.load_all()
    missing = sorted(name for name, prim in core.primitives().items() if prim not in registered)
    assert not missing, f"primitives without samples in properties/samples: {', '.join(missing)}"


def test_every_sample_is_for_a_registered_primitive():
    registry = core.primitives()
    unknown = sorted(p.name for p in samples.load_all() if registry.get(p.name) is not p)
    assert not unknown, f"samples registered for primitives missing from core.primitives(): {', '.join(unknown)}"
