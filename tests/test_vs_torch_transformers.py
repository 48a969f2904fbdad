"""HF transformers end to end with mindtorch_v2 installed as torch: GPT-2, BERT and a Llama-architecture model.

tests/hf_transformers_driver.py builds each model from a small config, sets every weight from numpy (fixed
seeds) and runs: training forward with labels, `loss.backward()`, an AdamW step, eval logits of a padded batch,
greedy `generate` on a left-padded batch with and without the KV cache, sampling `generate`, and
`save_pretrained` / `from_pretrained` through a local safetensors directory. The driver runs once, in a fresh
interpreter with `install_as_torch()` (it changes `import torch` for the whole process). Its numbers are
compared with real PyTorch + transformers running the same driver, recorded in tests/goldens/
vs_torch_transformers.* (`python tests/record_goldens.py transformers` where torch is installed).
Sampled tokens depend on the RNG stream, so sampling is checked by its properties, not by PyTorch's tokens.
"""
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from _goldens import Goldens, golden_fixtures

GOLDEN = Goldens("vs_torch_transformers")
_golden_file, _golden_case = golden_fixtures(GOLDEN)

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "hf_transformers_driver.py"
CAUSAL = ["gpt2", "llama"]
MODELS = ["gpt2", "bert", "llama"]
ATOL = 2e-5  # float32 logits of 2-layer models, summed in a different order than PyTorch's kernels


def run_driver(tmp_path, mindtorch):
    """The driver's results, run in a fresh interpreter (on mindtorch_v2 as torch, or on the real torch)."""
    out = tmp_path / ("mindtorch.pkl" if mindtorch else "torch.pkl")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                               if p])
    env.setdefault("HF_HUB_OFFLINE", "1")  # everything is local: no network, ever
    command = [sys.executable, str(DRIVER), str(out)] + (["mindtorch"] if mindtorch else [])
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, f"driver exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    with open(out, "rb") as f:
        return pickle.load(f)


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    if GOLDEN.recording:  # only PyTorch's side runs
        return None
    return run_driver(tmp_path_factory.mktemp("hf_mindtorch"), mindtorch=True)


@pytest.fixture(scope="module")
def torch_results(tmp_path_factory):
    """PyTorch's results of the same driver (run on real torch only when recording)."""
    cache = {}

    def get():
        if "r" not in cache:
            cache["r"] = run_driver(tmp_path_factory.mktemp("hf_torch"), mindtorch=False)
        return cache["r"]
    return get


def golden(torch_results, model, *keys):
    """PyTorch's recorded value of results[model][keys...]."""
    def thunk():
        value = torch_results()[model]
        for k in keys:
            value = value[k]
        return value
    return GOLDEN(thunk)


def test_driver_ran_on_mindtorch(ours):
    if GOLDEN.recording:
        return
    assert ours["torch"] == "mindtorch_v2"
    import transformers
    assert ours["transformers"] == transformers.__version__


@pytest.mark.parametrize("model", MODELS)
def test_logits_equal_pytorchs_on_the_same_weights(ours, torch_results, model):
    want = golden(torch_results, model, "eval_logits")
    if GOLDEN.recording:
        return
    got = ours[model]["eval_logits"]
    assert got.dtype == np.float32 and got.shape == want.shape == (2, 7, 48)
    np.testing.assert_allclose(got, want, rtol=0, atol=ATOL)


@pytest.mark.parametrize("model", MODELS)
def test_training_loss_gradients_and_adamw_step_equal_pytorchs(ours, torch_results, model):
    want_loss = golden(torch_results, model, "loss")
    want_logits = golden(torch_results, model, "train_logits")
    want_grads = golden(torch_results, model, "grads")
    want_after = golden(torch_results, model, "after_step")
    if GOLDEN.recording:
        return
    r = ours[model]
    assert r["loss"] == pytest.approx(want_loss, abs=1e-5)
    np.testing.assert_allclose(r["train_logits"], want_logits, rtol=0, atol=ATOL)
    assert list(r["grads"]) == list(want_grads)  # the same parameters, in the same order
    for name, g in want_grads.items():
        assert np.abs(g).max() > 0, name
        np.testing.assert_allclose(r["grads"][name], g, rtol=0, atol=1e-5, err_msg=name)
        # Adam's first step moves each weight by about lr * sign(grad): where the gradient is only rounding noise
        # (a key projection's bias does not change the softmax), its sign is noise too, so compare elsewhere
        clear = np.abs(g) > 1e-4
        np.testing.assert_allclose(r["after_step"][name][clear], want_after[name][clear], rtol=0, atol=1e-5,
                                   err_msg=name)
        step = np.abs(r["after_step"][name] - r["initial"][name]).max()
        assert step <= 1e-2 * (1 + 1e-2 * np.abs(r["initial"][name]).max()) + 1e-6, name  # lr * (1 + wd |w|)
        assert not np.array_equal(r["after_step"][name], r["initial"][name]), name


@pytest.mark.parametrize("model", CAUSAL)
def test_greedy_generate_on_a_left_padded_batch_equals_pytorchs_with_and_without_kv_cache(ours, torch_results,
                                                                                         model):
    want = golden(torch_results, model, "greedy")
    want_scores = golden(torch_results, model, "greedy_scores")
    if GOLDEN.recording:
        return
    r = ours[model]
    assert r["greedy"].dtype == np.int64 and r["greedy"].shape == (2, 13)
    assert np.array_equal(r["greedy"], want)
    assert np.array_equal(r["greedy_no_cache"], want)
    np.testing.assert_allclose(r["greedy_scores"], want_scores, rtol=0, atol=ATOL)
    assert np.array_equal(r["greedy"][:, 7:], r["greedy_scores"].argmax(-1).T)


@pytest.mark.parametrize("model", CAUSAL)
def test_sampling_generate_gives_valid_reproducible_tokens(ours, torch_results, model):
    want = golden(torch_results, model, "sample")  # PyTorch's properties (its tokens are not compared)
    if GOLDEN.recording:
        return
    s = ours[model]["sample"]
    props = ("shape", "dtype", "prompt_kept", "in_vocab", "same_seed_same_tokens", "top_k_1_is_greedy")
    assert {k: s[k] for k in props} == {k: want[k] for k in props} == {
        "shape": [2, 13], "dtype": "torch.int64", "prompt_kept": True, "in_vocab": True,
        "same_seed_same_tokens": True, "top_k_1_is_greedy": True}
    draws = s["new_tokens"]
    assert all(d.shape == (2, 6) and d.min() >= 0 and d.max() < 48 for d in draws)
    assert len({d.tobytes() for d in draws}) > 1  # successive draws differ: it samples


@pytest.mark.parametrize("model", MODELS)
def test_save_pretrained_then_from_pretrained_round_trips_through_safetensors(ours, torch_results, model):
    want = golden(torch_results, model, "round_trip")
    if GOLDEN.recording:
        return
    r = ours[model]["round_trip"]
    assert r == want
    assert "model.safetensors" in r["files"] and "config.json" in r["files"]
    assert r["disk_equals_model"] and r["loaded_equals_disk"] and r["loaded_logits_equal"]
    assert r["loaded_dtype"] == "torch.float32"
