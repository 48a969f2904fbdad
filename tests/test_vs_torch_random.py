"""Seeded random streams equal PyTorch's CPU generator, bit for bit.

Each case seeds the library's global generator (or a torch.Generator) and draws; PyTorch's numbers were
recorded once into tests/goldens/vs_torch_random.{json.gz,npz} (regenerate with
`python tests/record_goldens.py random` where torch is installed). Comparisons are exact: no tolerance.
"""
import pytest

from _goldens import Goldens, golden_fixtures
from test_vs_torch_eager import compare

GOLDEN = Goldens("vs_torch_random")
_golden_file, _golden_case = golden_fixtures(GOLDEN)
SEEDS = (0, 7, 1234)


def exact(fn, **kw):
    """fn(L, seed) for each seed, compared with PyTorch's recorded result without tolerance."""
    for s in SEEDS:
        compare(fn, s, what=f"{getattr(fn, '__name__', 'case')} seed={s}", rtol=0, atol=0, store=GOLDEN, **kw)


def seeded(L, seed):
    L.manual_seed(seed)
    return L


FLOATS = ["float32", "float64", "float16", "bfloat16"]
SIZES = [1, 3, 15, 16, 17, 32, 100, 1000]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES)
def test_rand_and_uniform_match_torch(dtype, n):
    exact(lambda L, s: seeded(L, s).rand(n, dtype=getattr(L, dtype)).float())
    exact(lambda L, s: seeded(L, s).empty(n, dtype=getattr(L, dtype)).uniform_(-0.37, 1.9).float())


# half and bfloat16 randn of more than 16 elements, not a multiple of 16, is not matched (PyTorch's block fill
# treats their last partial block its own way); those sizes are left out
RANDN = [(d, n) for d in FLOATS for n in SIZES if d in ("float32", "float64") or n <= 16 or n % 16 == 0]


@pytest.mark.parametrize("dtype,n", RANDN)
def test_randn_matches_torch_including_the_cached_sample(dtype, n):

    def draws(L, s):
        T = seeded(L, s)
        d = getattr(T, dtype)
        return T.cat([T.randn(n, dtype=d), T.randn(3, dtype=d), T.randn(n, dtype=d)]).float()
    exact(draws)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", SIZES)
def test_normal_fill_with_mean_and_std_matches_torch(dtype, n):
    exact(lambda L, s: seeded(L, s).empty(n, dtype=getattr(L, dtype)).normal_(0.3, 2.7))


def _stored(t):
    """bfloat16 results compared as float64 (exact), as the golden store keeps numpy dtypes."""
    return t.double() if str(t.dtype).endswith("bfloat16") else t


RANDINT = [("int64", 0, 10), ("int64", -5, 7), ("int64", 0, 2 ** 33), ("int64", -3, 2 ** 40), ("int32", 0, 10),
           ("int16", -5, 7), ("int8", 0, 2), ("uint8", 0, 10), ("bool", 0, 2), ("float32", -5, 7),
           ("float64", 0, 2 ** 40), ("float16", 0, 10), ("bfloat16", -5, 7)]


@pytest.mark.parametrize("dtype,low,high", RANDINT)
def test_randint_matches_torch(dtype, low, high):
    exact(lambda L, s: _stored(seeded(L, s).randint(low, high, (37,), dtype=getattr(L, dtype))))


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64",
                                   "float16", "bfloat16"])
def test_random_fill_matches_torch(dtype):
    exact(lambda L, s: _stored(seeded(L, s).empty(41, dtype=getattr(L, dtype)).random_()))
    if dtype != "bool":
        exact(lambda L, s: _stored(seeded(L, s).empty(41, dtype=getattr(L, dtype)).random_(50)))
        exact(lambda L, s: _stored(seeded(L, s).empty(41, dtype=getattr(L, dtype)).random_(3, 50)))


@pytest.mark.parametrize("n", [0, 1, 2, 5, 16, 100, 1000, 5000])
def test_randperm_matches_torch(n):
    exact(lambda L, s: seeded(L, s).randperm(n).tolist())


def test_randperm_of_a_float_dtype_matches_torch():
    exact(lambda L, s: seeded(L, s).randperm(30, dtype=L.float32))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_bernoulli_matches_torch(dtype):
    exact(lambda L, s: seeded(L, s).bernoulli(L.linspace(0, 1, 50, dtype=getattr(L, dtype))))
    exact(lambda L, s: seeded(L, s).bernoulli(L.empty(50, dtype=getattr(L, dtype)), 0.3))
    exact(lambda L, s: seeded(L, s).zeros(50, dtype=getattr(L, dtype)).bernoulli_(0.7))
    exact(lambda L, s: seeded(L, s).zeros(50, dtype=getattr(L, dtype)).bernoulli_(L.full((50,), 0.25)))


DROPOUTS = {
    "dropout": lambda L: L.nn.functional.dropout(L.ones(10, 20), 0.3),
    "module": lambda L: L.nn.Dropout(0.1)(L.arange(60.).reshape(3, 20)),
    "dropout1d": lambda L: L.nn.functional.dropout1d(L.ones(4, 6, 3), 0.5),
    "dropout2d": lambda L: L.nn.functional.dropout2d(L.ones(4, 6, 3, 3), 0.5),
    "dropout3d": lambda L: L.nn.functional.dropout3d(L.ones(2, 3, 2, 2, 2), 0.4),
    "alpha": lambda L: L.nn.functional.alpha_dropout(L.arange(40.).reshape(4, 10) / 7, 0.2, training=True),
    "feature_alpha": lambda L: L.nn.functional.feature_alpha_dropout(L.ones(3, 4, 5), 0.3, training=True),
    "float64": lambda L: L.nn.functional.dropout(L.ones(10, 20, dtype=L.float64), 0.3),
    "float16": lambda L: L.nn.functional.dropout(L.ones(10, 20, dtype=L.float16), 0.3).float(),
}


@pytest.mark.parametrize("name", sorted(DROPOUTS))
def test_dropout_masks_match_torch(name):
    exact(lambda L, s: DROPOUTS[name](seeded(L, s)))


MODULES = {
    "linear": lambda L: L.nn.Linear(3, 4),
    "mlp": lambda L: L.nn.Sequential(L.nn.Linear(30, 40), L.nn.ReLU(), L.nn.Linear(40, 5)),
    "conv2d": lambda L: L.nn.Conv2d(3, 4, 3),
    "embedding": lambda L: L.nn.Embedding(10, 7),
    "lstm": lambda L: L.nn.LSTM(5, 6),
    "layernorm_linear": lambda L: L.nn.Sequential(L.nn.LayerNorm(8), L.nn.Linear(8, 8)),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_initial_parameters_match_torch(name):
    def params(L, s):
        m = MODULES[name](seeded(L, s))
        return L.cat([p.detach().reshape(-1) for p in m.parameters()])
    exact(params)


INITS = {
    "uniform_": lambda L, t: L.nn.init.uniform_(t, -0.5, 0.25),
    "normal_": lambda L, t: L.nn.init.normal_(t, 0.1, 0.3),
    "xavier_uniform_": lambda L, t: L.nn.init.xavier_uniform_(t),
    "xavier_normal_": lambda L, t: L.nn.init.xavier_normal_(t),
    "kaiming_uniform_": lambda L, t: L.nn.init.kaiming_uniform_(t, a=0.1),
    "kaiming_normal_": lambda L, t: L.nn.init.kaiming_normal_(t, mode="fan_out"),
    "trunc_normal_": lambda L, t: L.nn.init.trunc_normal_(t, std=0.02),
    "trunc_normal_rejection": lambda L, t: L.nn.init.trunc_normal_(t, a=1.0, b=1.5),
    "sparse_": lambda L, t: L.nn.init.sparse_(t, 0.3),
}


@pytest.mark.parametrize("name", sorted(INITS))
def test_nn_init_matches_torch(name):
    exact(lambda L, s: INITS[name](seeded(L, s), L.empty(20, 30)))


def test_orthogonal_init_matches_torch_to_rounding():
    """The draw is PyTorch's; the QR factorization is NumPy's LAPACK, so equal to rounding only."""
    for s in SEEDS:
        compare(lambda L, s: L.nn.init.orthogonal_(seeded(L, s).empty(6, 9)), s, rtol=1e-5, atol=1e-6,
                store=GOLDEN)


NORMALS = {
    "tensors": lambda L: L.normal(L.arange(20.), L.arange(1., 21.)),
    "mean_tensor": lambda L: L.normal(L.arange(20.), 2.0),
    "std_tensor": lambda L: L.normal(1.5, L.arange(1., 21.)),
    "size": lambda L: L.normal(1.5, 2.0, size=(5, 7)),
}


@pytest.mark.parametrize("name", sorted(NORMALS))
def test_torch_normal_matches_torch(name):
    exact(lambda L, s: NORMALS[name](seeded(L, s)))


OTHERS = {
    "generator": lambda L: L.rand(5, generator=L.Generator().manual_seed(42)),
    "generator_randn": lambda L: L.randn(40, generator=L.Generator().manual_seed(3)),
    "transposed_normal_": lambda L: L.empty(20, 30).t().normal_(),
    "transposed_uniform_": lambda L: L.empty(20, 30).t().uniform_(),
    "column_normal_": lambda L: (lambda x: (x[:, 3].normal_(), x)[1])(L.zeros(20, 30)),
    "rand_like": lambda L: L.rand_like(L.empty(3, 5, dtype=L.float64)),
    "randn_like": lambda L: L.randn_like(L.empty(4, 5)),
    "randint_like": lambda L: L.randint_like(L.empty(3, 5), 10),
    "multinomial_replacement": lambda L: L.multinomial(L.tensor([0.1, 0.5, 0.2, 0.2]), 20, replacement=True),
    "multinomial": lambda L: L.multinomial(L.tensor([[0.1, 0.5, 0.2, 0.2], [1., 0., 2., 3.]]), 3),
    "multinomial_one": lambda L: L.multinomial(L.tensor([0.1, 0.5, 0.2, 0.2]), 1),
    "exponential_": lambda L: L.empty(30).exponential_(),
    "exponential_double": lambda L: L.empty(30, dtype=L.float64).exponential_(2.0),
    "state_after_draws": lambda L: (L.rand(7), L.randn(1), L.get_rng_state())[2],
    "state_of_generator": lambda L: L.Generator().manual_seed(9).get_state(),
    "initial_seed": lambda L: L.initial_seed(),
    "negative_seed": lambda L: (L.manual_seed(-5), L.initial_seed(), L.rand(3))[1:],
}


@pytest.mark.parametrize("name", sorted(OTHERS))
def test_other_draws_match_torch(name):
    exact(lambda L, s: OTHERS[name](seeded(L, s)))


def test_state_round_trip_replays_the_stream():
    def replay(L, s):
        T = seeded(L, s)
        T.randn(3)
        st = T.get_rng_state()
        a = T.randn(5)
        T.set_rng_state(st)
        return T.cat([a, T.randn(5)])
    exact(replay)


def _sampler_orders(L, s):
    from importlib import import_module
    data = import_module(L.__name__ + ".utils.data")
    seeded(L, s)
    a = list(data.RandomSampler(range(50))) + list(data.RandomSampler(range(50)))
    b = list(data.RandomSampler(range(50), replacement=True, num_samples=70))
    c = [x.tolist() for x in data.DataLoader(list(range(20)), batch_size=4, shuffle=True)]
    return L.tensor(a), L.tensor(b), L.tensor(c)


def test_random_sampler_and_shuffling_loader_match_torch():
    exact(_sampler_orders)


ERRORS = {
    "randint_empty_range": lambda L: L.randint(5, 3, (2,)),
    "randint_out_of_dtype": lambda L: L.randint(0, 300, (2,), dtype=L.uint8),
    "randperm_negative": lambda L: L.randperm(-1),
    "uniform_reversed": lambda L: L.empty(3).uniform_(2, 1),
    "normal_negative_std": lambda L: L.empty(3).normal_(0, -1),
    "bernoulli_p": lambda L: L.empty(3).bernoulli_(1.5),
    "set_state_dtype": lambda L: L.set_rng_state(L.zeros(5056)),
    "set_state_size": lambda L: L.set_rng_state(L.zeros(50, dtype=L.uint8)),
    "set_state_invalid": lambda L: L.set_rng_state(L.zeros(5056, dtype=L.uint8)),
    "seed_overflow": lambda L: L.manual_seed(2 ** 64),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_bad_input_raises_torch_errors(name):
    compare(lambda L: ERRORS[name](L), store=GOLDEN)
