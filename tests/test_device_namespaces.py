"""The device and back-end namespaces answer as PyTorch does on a machine without a GPU."""
import threading
import warnings

import pytest

import mindtorch_v2 as torch
import mindtorch_v2.accelerator as accelerator
import mindtorch_v2.amp as amp
import mindtorch_v2.backends as backends
import mindtorch_v2.cpu as cpu
import mindtorch_v2.cuda as cuda
import mindtorch_v2.mps as mps
import mindtorch_v2.xpu as xpu


def test_cuda_queries_answer_no_gpu():
    assert cuda.is_available() is False and cuda.device_count() == 0 and cuda.is_initialized() is False
    assert cuda.memory_allocated() == 0 and cuda.max_memory_reserved() == 0 and cuda.is_bf16_supported() is False
    assert cuda.manual_seed(0) is None and cuda.manual_seed_all(0) is None and cuda.empty_cache() is None


@pytest.mark.parametrize("fn", [cuda.current_device, cuda.get_device_name, cuda.synchronize, cuda.mem_get_info,
                                cuda.current_stream, cuda.initial_seed, lambda: cuda.set_device(0)])
def test_cuda_calls_needing_a_gpu_raise_torchs_assertion(fn):
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        fn()


def test_cuda_classes_exist_and_refuse_instances():
    with pytest.raises(RuntimeError, match="requires CUDA support"):
        cuda.Stream()
    for cls in (cuda.Event, cuda.CUDAGraph):
        with pytest.raises(RuntimeError, match="dummy base class"):
            cls()
    with cuda.stream(None):
        pass


def test_cuda_amp_is_disabled_with_torchs_warnings():
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling"):
        scaler = amp.GradScaler("cuda")
    assert not scaler.is_enabled() and scaler.state_dict() == {} and scaler.get_scale() == 1.0
    x = torch.ones(2)
    assert scaler.scale(x) is x
    with pytest.warns(FutureWarning), pytest.warns(UserWarning, match="Disabling autocast"):
        ctx = cuda.amp.autocast()
    with ctx:
        assert not amp.is_autocast_enabled("cuda")


def test_disabled_scaler_step_calls_the_optimizer():
    class Opt:
        calls = 0

        def step(self):
            Opt.calls += 1
            return "stepped"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = cuda.amp.GradScaler()
    assert scaler.step(Opt()) == "stepped" and Opt.calls == 1
    scaler.update()


def test_cpu_scaler_skips_nonfinite_steps_and_backs_off():
    p = torch.ones(2, requires_grad=True)
    opt = torch.optim.SGD([p], lr=1.0)
    scaler = amp.GradScaler("cpu", init_scale=4.0)
    scaler.scale((p * 2).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert p.tolist() == [-1.0, -1.0] and scaler.get_scale() == 4.0
    opt.zero_grad()
    scaler.scale((p * float("inf")).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert p.tolist() == [-1.0, -1.0] and scaler.get_scale() == 2.0


def test_cpu_autocast_records_its_dtype():
    assert not amp.is_autocast_enabled("cpu")
    with amp.autocast("cpu", dtype=torch.bfloat16):
        assert amp.is_autocast_enabled("cpu") and amp.get_autocast_dtype("cpu") == torch.bfloat16
    assert not amp.is_autocast_enabled("cpu")


def test_other_namespaces():
    assert not mps.is_available() and mps.manual_seed(0) is None and not backends.mps.is_built()
    assert not xpu.is_available() and xpu.device_count() == 0
    assert not accelerator.is_available() and accelerator.current_accelerator() is None
    assert accelerator.device_count() == 0
    assert cpu.is_available() and cpu.device_count() == 1 and cpu.current_device() == "cpu"
    assert cpu.synchronize() is None


def test_distributed_is_available_with_mpi4py_and_needs_a_default_group():
    import importlib.util
    import mindtorch_v2.distributed as dist
    assert torch.distributed is dist
    assert dist.is_available() is (importlib.util.find_spec("mpi4py") is not None)
    assert isinstance(dist.ProcessGroup, type) and not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.all_reduce(torch.ones(2))


def test_backend_flags_are_settable_with_torchs_defaults():
    assert backends.cuda.matmul.allow_tf32 is False and backends.cuda.is_built() is False
    assert backends.cudnn.enabled and not backends.cudnn.benchmark and not backends.cudnn.is_available()
    assert backends.cudnn.version() is None and not backends.mkldnn.is_available()
    assert backends.opt_einsum.is_available()
    backends.cudnn.benchmark = True
    backends.cudnn.benchmark = False
    with backends.cudnn.flags(enabled=False):
        assert backends.cudnn.enabled is False
    assert backends.cudnn.enabled is True


def test_device_context_manager_sets_the_factories_default():
    with torch.device("meta"):
        made = [torch.zeros(2), torch.ones(2), torch.empty(2), torch.full((2,), 1.0), torch.arange(3),
                torch.rand(2), torch.randn(2), torch.randint(3, (2,)), torch.tensor([1.0]), torch.linspace(0, 1, 3),
                torch.eye(2)]
        assert torch.get_default_device() == torch.device("meta")
        assert torch.zeros(2, device="cpu").device == torch.device("cpu")
    assert all(t.device == torch.device("meta") for t in made)
    assert torch.zeros(2).device == torch.device("cpu")


def test_set_default_device_is_per_thread():
    torch.set_default_device("meta")
    try:
        seen = []
        thread = threading.Thread(target=lambda: seen.append(torch.zeros(1).device))
        thread.start()
        thread.join()
        assert torch.zeros(1).device == torch.device("meta") and seen == [torch.device("cpu")]
    finally:
        torch.set_default_device(None)
    assert torch.get_default_device() == torch.device("cpu")


def test_set_num_threads_drives_the_blas_pool():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    with pytest.raises(RuntimeError):
        torch.set_num_threads(0)


# ---------------------------------------------------------------------------
# accelerator devices can be named; using them raises PyTorch's error (checked on PyTorch 2.13, CPU build)


@pytest.mark.parametrize("spec,type_,index", [("cuda", "cuda", None), ("cuda:1", "cuda", 1), ("mps", "mps", None),
                                              ("xpu", "xpu", None), ("hpu", "hpu", None), ("cpu:0", "cpu", 0)])
def test_accelerator_devices_are_values(spec, type_, index):
    d = torch.device(spec)
    assert (d.type, d.index, str(d)) == (type_, index, spec)
    assert torch.device("cuda", 1) == torch.device("cuda:1") and torch.device("cuda") != torch.device("cuda:0")


@pytest.mark.parametrize("make", [lambda d: torch.zeros(2, device=d), lambda d: torch.tensor([1.0], device=d),
                                  lambda d: torch.randn(2, device=d), lambda d: torch.ones(2).to(d),
                                  lambda d: torch.nn.Linear(2, 2).to(d)])
def test_using_an_absent_accelerator_raises_pytorchs_error(make):
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        make("cuda")
    with pytest.raises(AssertionError, match="Torch not compiled with XPU enabled"):
        make("xpu")
    with pytest.raises(RuntimeError, match="not linked with support for mps devices"):
        make("mps")


def test_tensor_cuda_and_unknown_device_types():
    x = torch.ones(2)
    for call in (x.cuda, lambda: x.cuda(0), lambda: x.cuda(non_blocking=True), x.xpu):
        with pytest.raises(AssertionError, match="Torch not compiled with"):
            call()
    assert x.cpu() is x or torch.equal(x.cpu(), x)
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, .* device type at start of device string: foo"):
        torch.device("foo")


def test_nn_parallel_single_process_names():
    from mindtorch_v2.nn.parallel import DataParallel, DistributedDataParallel, data_parallel
    m = torch.nn.Linear(2, 3)
    x = torch.ones(4, 2)
    dp = DataParallel(m)
    assert dp.module is m and dp.device_ids == [] and torch.equal(dp(x), m(x))
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    assert torch.equal(data_parallel(m, x), m(x)) and torch.nn.parallel.DataParallel is torch.nn.DataParallel
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedDataParallel(m)
