"""safetensors with mindtorch_v2 installed as torch: save_file, load_file, safe_open(framework="pt").

The library's Rust side imports `torch` once per process and keeps it, so the scenarios run in a fresh
interpreter (this file run as a script, `sys.modules["torch"] = mindtorch_v2`): real torch, imported by
other tests of the session, is never mixed in, and no other test inherits the swap. The torch APIs
safetensors calls (frombuffer, data_ptr, untyped_storage, layout) are also tested directly, in process.
"""
import ctypes
import json
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np
import pytest

import mindtorch_v2

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "safetensors" / "small.safetensors"


# ----------------------------------------------------------------------------------------------
# scenarios, run in the child interpreter with mindtorch_v2 as torch

def _same(t, expected):
    """t equals expected exactly: dtype, shape and bytes (bfloat16 and bool included)."""
    assert t.dtype is expected.dtype, (t.dtype, expected.dtype)
    assert tuple(t.shape) == tuple(expected.shape), (t.shape, expected.shape)
    assert np.asarray(t).tobytes() == np.asarray(expected).tobytes(), (t, expected)


def _mixed(torch):
    return {
        "float32": torch.arange(12, dtype=torch.float32).reshape(3, 4) / 3,
        "float16": torch.tensor([[0.5, -1.25], [65504.0, 1e-4]], dtype=torch.float16),
        "bfloat16": (torch.arange(6, dtype=torch.float32) * 1.5 - 2).to(torch.bfloat16).reshape(2, 3),
        "int64": torch.tensor([-(2 ** 62), 0, 2 ** 62 + 7]),
        "bool": torch.tensor([[True, False, True]]),
        "uint8": torch.tensor([0, 1, 254, 255], dtype=torch.uint8),
        "float64": torch.tensor([1 / 3, -2.0], dtype=torch.float64),
        "uint16": torch.arange(3).to(torch.uint16),
        "scalar": torch.tensor(7, dtype=torch.int32),
        "empty": torch.zeros(0, 3),
    }


def scenario_save_file_then_load_file_gives_exact_tensors(tmp):
    import torch
    from safetensors.numpy import load_file as load_numpy
    from safetensors.torch import load_file, save_file
    tensors = _mixed(torch)
    path = tmp / "mixed.safetensors"
    save_file(tensors, path, metadata={"note": "mixed"})
    loaded = load_file(path)
    assert sorted(loaded) == sorted(tensors)
    for name, t in tensors.items():
        assert type(loaded[name]) is torch.Tensor
        _same(loaded[name], t)
    # the file is the format, not ours: numpy's reader sees the same bytes
    for name, arr in load_numpy(path).items():
        assert arr.tobytes() == np.asarray(tensors[name]).tobytes(), name


def scenario_safe_open_pt_keys_metadata_get_tensor_get_slice(tmp):
    import torch
    from safetensors import safe_open
    from safetensors.torch import save_file
    tensors = _mixed(torch)
    path = tmp / "mixed.safetensors"
    save_file(tensors, path, metadata={"note": "mixed", "step": "3"})
    with safe_open(path, framework="pt", device="cpu") as f:
        assert sorted(f.keys()) == sorted(tensors)
        assert f.metadata() == {"note": "mixed", "step": "3"}
        for name in f.keys():
            _same(f.get_tensor(name), tensors[name])
        s = f.get_slice("float32")
        assert s.get_shape() == [3, 4] and s.get_dtype() == "F32"
        _same(s[1:, 1:3], tensors["float32"][1:, 1:3])
        _same(s[2], tensors["float32"][2])
        _same(f.get_slice("bfloat16")[:, :2], tensors["bfloat16"][:, :2])
        _same(f.get_slice("int64")[1:], tensors["int64"][1:])


def scenario_save_and_load_bytes(tmp):
    import torch
    from safetensors.torch import load, save
    tensors = _mixed(torch)
    loaded = load(save(tensors))
    for name, t in tensors.items():
        _same(loaded[name], t)


def scenario_file_written_by_real_torch_loads(tmp):
    import torch
    from safetensors import safe_open
    from safetensors.torch import load_file
    expected = {  # the closed forms of tests/fixtures/safetensors/make_small.py
        "float32": (torch.arange(12, dtype=torch.float32) / 4 - 1).reshape(3, 4),
        "float16": (torch.arange(6, dtype=torch.float16) / 2).reshape(2, 3),
        "bfloat16": (torch.arange(8, dtype=torch.bfloat16) - 3).reshape(2, 2, 2),
        "float64": torch.arange(5, dtype=torch.float64) / 8,
        "int64": torch.arange(-3, 3, dtype=torch.int64).reshape(2, 3) * 1000003,
        "int32": torch.arange(4, dtype=torch.int32) - 2,
        "int8": torch.arange(-4, 4, dtype=torch.int8),
        "uint8": torch.tensor([250, 251, 252, 253, 254, 255], dtype=torch.uint8),
        "bool": torch.tensor([[True, False], [False, True], [False, False]]),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 4),
    }
    loaded = load_file(FIXTURE)
    assert sorted(loaded) == sorted(expected)
    for name, t in expected.items():
        _same(loaded[name], t)
    with safe_open(FIXTURE, framework="pt") as f:
        assert f.metadata()["format"] == "pt"
        assert f.metadata()["written_by"].startswith("torch ")
        _same(f.get_slice("int64")[:, 1:], expected["int64"][:, 1:])


def scenario_shared_and_non_contiguous_tensors_are_refused_as_with_torch(tmp):
    import torch
    from safetensors.torch import load_file, save_file
    x = torch.arange(12.0).reshape(3, 4)
    for shared in ({"a": x, "b": x}, {"a": x, "b": x[1]}, {"a": x, "b": x.view(4, 3)}):
        with pytest.raises(RuntimeError, match="Some tensors share memory"):
            save_file(shared, tmp / "shared.safetensors")
    with pytest.raises(ValueError, match="non contiguous tensor: `t`"):
        save_file({"t": x.t()}, tmp / "t.safetensors")
    # a part of a storage alone is fine; so is a product of a transposed tensor made contiguous (x.t() * 1 keeps
    # the transposed layout, as torch's, and is refused like x.t())
    with pytest.raises(ValueError, match="non contiguous tensor: `p`"):
        save_file({"p": x.t() * 1}, tmp / "p.safetensors")
    fortran = (x.t() * 1).contiguous()
    save_file({"row": x[1], "fortran": fortran, "copy": x[1].clone()}, tmp / "ok.safetensors")
    loaded = load_file(tmp / "ok.safetensors")
    _same(loaded["row"], x[1])
    _same(loaded["fortran"], fortran)
    _same(loaded["copy"], x[1])


def scenario_save_model_and_load_model_with_tied_weights(tmp):
    import torch
    from safetensors import safe_open
    from safetensors.torch import load_model, save_model

    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(3, 4)
            self.b = torch.nn.Linear(3, 4)
            self.b.weight = self.a.weight

    torch.manual_seed(0)
    model = Tied()
    save_model(model, tmp / "tied.safetensors")
    with safe_open(tmp / "tied.safetensors", framework="pt") as f:
        assert sorted(f.keys()) == ["a.bias", "a.weight", "b.bias"]
        assert f.metadata() == {"b.weight": "a.weight"}
    torch.manual_seed(1)
    other = Tied()
    missing, unexpected = load_model(other, tmp / "tied.safetensors")
    assert not missing and not unexpected
    for name, p in model.state_dict().items():
        _same(other.state_dict()[name], p)


SCENARIOS = {name: fn for name, fn in list(globals().items()) if name.startswith("scenario_")}


def _run_all(tmp):
    """Run every scenario; returns name -> None (passed) or the formatted traceback."""
    results = {}
    for name, fn in SCENARIOS.items():
        try:
            (tmp / name).mkdir()
            fn(tmp / name)
            results[name] = None
        except BaseException:  # noqa: B902  (pytest.raises failures are BaseException subclasses)
            results[name] = traceback.format_exc()
    return results


# ----------------------------------------------------------------------------------------------
# the parent: one child interpreter for all scenarios, one test per scenario

@pytest.fixture(scope="module")
def child_results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("safetensors")
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), str(tmp)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_safetensors_with_mindtorch_as_torch(child_results, name):
    failure = child_results[name]
    assert failure is None, failure


# ----------------------------------------------------------------------------------------------
# the torch APIs safetensors calls, in process

def test_frombuffer_reads_bytes_as_dtype_with_count_and_offset():
    torch = mindtorch_v2
    raw = np.arange(6, dtype=np.float32).tobytes()
    t = torch.frombuffer(raw, dtype=torch.float32)
    assert t.dtype is torch.float32 and t.tolist() == [0, 1, 2, 3, 4, 5]
    assert torch.frombuffer(raw, dtype=torch.float32, count=2, offset=8).tolist() == [2, 3]
    assert torch.frombuffer(bytearray(b"\x01\x00\x02"), dtype=torch.bool).tolist() == [True, False, True]
    assert torch.frombuffer(memoryview(raw), dtype=torch.uint8).shape == (24,)
    assert torch.frombuffer(raw, dtype=torch.float32, requires_grad=True).requires_grad


def test_frombuffer_copies_a_writable_buffer():
    buf = bytearray(np.arange(3, dtype=np.int32).tobytes())
    t = mindtorch_v2.frombuffer(buf, dtype=mindtorch_v2.int32)
    buf[0] = 9
    assert t.tolist() == [0, 1, 2]


@pytest.mark.parametrize("args, message", [
    ((b"", -1, 0), r"both buffer length \(0\) and count \(-1\) must not be 0"),
    ((b"abcd", -1, 0), None),
    ((b"abcd", -1, 4), r"offset \(4 bytes\) must be non-negative and no greater than buffer length \(4 bytes\) minus 1"),
    ((b"abcde", -1, 0), r"buffer length \(5 bytes\) after offset \(0 bytes\) must be a multiple of element size \(2\)"),
    ((b"abcd", 3, 0), r"requested buffer length \(3 \* 2 bytes\) after offset \(0 bytes\) must not be greater "
                   r"than actual buffer length \(4 bytes\)"),
])
def test_frombuffer_checks_lengths_as_torch(args, message):
    buf, count, offset = args
    if message is None:
        assert mindtorch_v2.frombuffer(buf, dtype=mindtorch_v2.int16).numel() == 2
        return
    with pytest.raises(ValueError, match=message):
        mindtorch_v2.frombuffer(buf, dtype=mindtorch_v2.int16, count=count, offset=offset)


def test_frombuffer_refuses_an_object_without_the_buffer_protocol():
    with pytest.raises(ValueError, match="buffer protocol"):
        mindtorch_v2.frombuffer([1, 2], dtype=mindtorch_v2.uint8)


def test_data_ptr_of_views_is_the_storage_address_plus_offset():
    torch = mindtorch_v2
    x = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    base = x.untyped_storage().data_ptr()
    assert base != 0 and x.data_ptr() == base
    assert x[1].data_ptr() == base + 4 * 8 and x[1].storage_offset() == 4
    assert x[1:, 2:].data_ptr() == base + 6 * 8
    assert x.view(-1)[-1].data_ptr() == base + 11 * 8
    assert x[2].untyped_storage().data_ptr() == base and x[2].untyped_storage().nbytes() == 96
    assert x.untyped_storage().size() == 96 and len(x.untyped_storage()) == 96
    assert x.untyped_storage().element_size() == 1 and x.untyped_storage().dtype is torch.uint8
    assert x[1].nbytes == 32 and x.itemsize == 8 and x.element_size() == 8
    assert x.layout is torch.strided and repr(torch.strided) == "torch.strided"
    # the address holds the elements, in the tensor's strides
    row = (ctypes.c_double * 4).from_address(x[1].data_ptr())
    assert list(row) == [4.0, 5.0, 6.0, 7.0]


def test_data_ptr_of_a_fortran_ordered_buffer_points_at_c_ordered_elements_without_a_version_bump():
    torch = mindtorch_v2
    # a row-major tensor whose numpy buffer is in Fortran order (x.t() * 1 no longer makes one: like torch's, the
    # product keeps the transposed layout)
    y = torch.from_numpy(np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3).T))
    version = y._version
    values = (ctypes.c_int32 * 6).from_address(y.data_ptr())
    assert list(values) == [0, 3, 1, 4, 2, 5]
    assert y._version == version and y.tolist() == [[0, 3], [1, 4], [2, 5]]
    assert y.data_ptr() == y.untyped_storage().data_ptr()  # stable once laid out


def test_data_ptr_of_empty_and_meta_tensors_is_zero():
    torch = mindtorch_v2
    assert torch.zeros(0).data_ptr() == 0 and torch.zeros(0).untyped_storage().nbytes() == 0
    assert torch.zeros(2, device="meta").data_ptr() == 0


if __name__ == "__main__":  # the child: mindtorch_v2 as torch, before safetensors is imported
    sys.modules["torch"] = mindtorch_v2
    print(json.dumps(_run_all(Path(sys.argv[1]))))
