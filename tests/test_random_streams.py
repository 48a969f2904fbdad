"""The generator behind torch's random ops: PyTorch's mt19937 stream and state, what draws and what does not."""
import time

import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2.eager import random_ops


def test_seeding_gives_the_mt19937_stream_of_the_seeds_low_32_bits():
    torch.manual_seed(5)
    a = torch.rand(4)
    torch.manual_seed(5 + 2 ** 32)
    assert torch.equal(torch.rand(4), a)
    assert torch.initial_seed() == 5 + 2 ** 32


def test_float_uniforms_are_24_bit_words_of_the_engine():
    g = torch.Generator().manual_seed(0)
    words = np.random.RandomState(0).randint(0, 2 ** 32, size=4, dtype=np.uint64)  # same init_genrand
    expect = (words & 0xFFFFFF).astype(np.float32) * np.float32(2 ** -24)
    assert np.array_equal(torch.rand(4, generator=g).numpy(), expect)


def test_an_explicit_generator_leaves_the_global_stream_alone():
    torch.manual_seed(1)
    a = torch.rand(3)
    torch.manual_seed(1)
    torch.rand(2, generator=torch.Generator().manual_seed(9))
    assert torch.equal(torch.rand(3), a)


def test_meta_tensors_draw_nothing():
    torch.manual_seed(2)
    before = torch.get_rng_state()
    t = torch.rand(3, 4, device="meta")
    torch.empty(5, device="meta").normal_()
    torch.nn.Linear(1000, 1000, device="meta")
    assert t.shape == (3, 4) and t.device.type == "meta"
    assert torch.equal(torch.get_rng_state(), before)


def test_the_cached_normal_sample_is_part_of_the_state():
    torch.manual_seed(3)
    torch.randn(1)  # leaves the second Box-Muller sample cached
    state = torch.get_rng_state()
    assert state.dtype == torch.uint8 and state.shape == (5056,)
    a = torch.randn(1)
    torch.set_rng_state(state)
    assert torch.equal(torch.randn(1), a)
    torch.manual_seed(3)  # seeding drops the cache
    torch.randn(1)
    assert torch.equal(torch.randn(1), a)


def test_generator_state_round_trips_between_generators():
    g = torch.Generator().manual_seed(11)
    torch.rand(5, generator=g)
    h = torch.Generator().set_state(g.get_state())
    assert torch.equal(torch.randn(20, generator=h), torch.randn(20, generator=g))
    assert h.initial_seed() == 11


def test_vmap_randomness_modes_still_draw_through_keys():
    x = torch.zeros(4, 3)
    same = torch.func.vmap(lambda r: r + torch.rand(3), randomness="same")(x)
    assert torch.equal(same[0], same[1])
    diff = torch.func.vmap(lambda r: r + torch.rand(3), randomness="different")(x)
    assert not torch.equal(diff[0], diff[1])
    with pytest.raises(RuntimeError, match="randomness error mode"):
        torch.func.vmap(lambda r: r + torch.rand(3))(x)


def test_large_draws_are_vectorized():
    start = time.perf_counter()
    torch.randn(1_000_000)
    torch.rand(1_000_000)
    torch.nn.functional.dropout(torch.ones(1_000_000), 0.5)
    torch.randperm(100_000)
    assert time.perf_counter() - start < 5.0


def test_in_place_fill_of_a_transposed_view_follows_memory_order():
    torch.manual_seed(4)
    a = torch.empty(3, 5).uniform_()
    torch.manual_seed(4)
    b = torch.empty(5, 3).t().uniform_()
    assert torch.equal(b, a.reshape(5, 3).t())


def test_vmap_keys_come_from_the_generator_stream():
    torch.manual_seed(6)
    k1 = random_ops.default_generator.next_key()
    torch.manual_seed(6)
    k2 = random_ops.default_generator.next_key()
    assert np.array_equal(np.asarray(k1), np.asarray(k2))


def test_torch_random_namespace_and_fork_rng():
    import mindtorch_v2.random as trandom
    assert trandom.manual_seed is torch.manual_seed and trandom.default_generator is torch.default_generator
    torch.manual_seed(1)
    with trandom.fork_rng():
        inside = torch.rand(2)
    assert torch.equal(inside, torch.rand(2))  # the stream continued from where the block started
    with trandom.fork_rng(enabled=False):
        torch.rand(1)
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        with trandom.fork_rng(devices=[0]):
            pass
