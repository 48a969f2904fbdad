"""Reading the earlier mindtorch_v2 checkpoint format (zip of .npy + JSON), which torch.load still reads."""
import collections
import io
import json
import math
import pickle
import zipfile

import numpy as np
import pytest

import mindtorch_v2 as torch

mt_save = torch.serialization.mindtorch_format.save  # files of the earlier format, which load still reads
DOC = "mindtorch_checkpoint/data.json"
INVALID = "is not a valid (?:mindtorch )?checkpoint"  # the earlier format's reader, or the torch-format one


def roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    mt_save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kwargs)


def saved_bytes(obj):
    buf = io.BytesIO()
    mt_save(obj, buf)
    return buf.getvalue()


def archive(entries):
    """A zip holding the given {name: bytes} entries."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return buf.getvalue()


def npy(array, allow_pickle=False):
    out = io.BytesIO()
    np.lib.format.write_array(out, array, allow_pickle=allow_pickle)
    return out.getvalue()


def doc(tensors, root):
    return json.dumps({"format": "mindtorch_v2.save", "version": 1, "tensors": tensors, "root": root})


def record(dtype="float32", shape=(2,)):
    return {"kind": "tensor", "dtype": dtype, "shape": list(shape), "device": "cpu", "requires_grad": False,
            "parameter": False}


def load_bytes(data):
    return torch.load(io.BytesIO(data))


# ---------------------------------------------------------------------------
# round trips


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bool", "uint8", "int8", "int16", "int32",
                                   "int64"])
def test_every_dtype_round_trips_exactly(dtype):
    values = np.array([[0, 1, -2], [3, 127, -128]]).astype(np.dtype(dtype.replace("bool", "bool_")))
    if dtype.startswith("float"):
        values = np.array([[0.1, -1.5, np.inf], [np.nan, 65504, -0.0]], dtype=dtype)
    t = torch.from_numpy(values)
    out = roundtrip(t)
    assert out.dtype is t.dtype and out.shape == t.shape
    np.testing.assert_array_equal(np.asarray(out), values)


def test_zero_dim_and_empty_tensors():
    scalar = roundtrip(torch.tensor(3.25, dtype=torch.float64))
    assert scalar.shape == torch.Size([]) and scalar.item() == 3.25 and scalar.dtype == torch.float64
    empty = roundtrip(torch.zeros(0, 3, dtype=torch.int8))
    assert empty.shape == torch.Size([0, 3]) and empty.dtype == torch.int8


def test_a_lone_view_is_saved_as_its_values():
    base = torch.arange(12.0).reshape(3, 4)
    out = roundtrip({"t": base.t()})
    assert out["t"].tolist() == base.t().tolist() and out["t"].is_contiguous()


def test_views_of_one_base_keep_their_geometry_and_share_memory_as_in_torch():
    base = torch.arange(12.0).reshape(3, 4)
    out = roundtrip({"t": base.t(), "strided": base[::2, 1::2], "row": base[1]})
    assert out["t"].tolist() == base.t().tolist() and out["t"].stride() == (1, 4)
    assert out["strided"].tolist() == [[1.0, 3.0], [9.0, 11.0]] and out["strided"].stride() == (8, 2)
    assert out["row"].tolist() == [4.0, 5.0, 6.0, 7.0] and out["row"].storage_offset() == 4
    out["row"][1] = -1.0
    assert out["t"][1, 1].item() == -1.0 and out["strided"][0, 0].item() == 1.0
    assert all(t.is_leaf and t.grad_fn is None for t in out.values())


def test_loaded_tensors_are_independent_copies():
    t = torch.ones(3)
    buf = io.BytesIO()
    mt_save({"a": t}, buf)
    t.add_(1)  # changing the original after saving changes nothing in the file
    buf.seek(0)
    first = torch.load(buf)["a"]
    buf.seek(0)
    second = torch.load(buf)["a"]
    first.mul_(10)
    assert second.tolist() == [1.0, 1.0, 1.0] and t.tolist() == [2.0, 2.0, 2.0]


def test_nested_containers_and_python_values():
    obj = {
        "list": [1, 2.5, "three", None, True, False],
        "tuple": (1, (2, [3])),
        "int_keys": {0: "a", -1: "b", (1, 2): "tuple key", None: 0, 2.5: "float key"},
        "floats": [math.inf, -math.inf, 1e-300, -0.0],
        "big": 2 ** 80,
        "bytes": b"\x00\xffbinary",
        "set": {1, 2, 3},
        "frozenset": frozenset({"x"}),
        "complex": 1 + 2j,
        "size": torch.Size([2, 3]),
        "dtype": torch.float16,
        "device": torch.device("cpu"),
        "unicode": "héllo \u2603",
        "": "empty key",
    }
    out = roundtrip(obj)
    assert out == obj
    assert type(out["tuple"]) is tuple and type(out["tuple"][1][1]) is list
    assert type(out["size"]) is torch.Size and out["dtype"] is torch.float16
    assert math.isnan(roundtrip(float("nan")))


def test_top_level_values_of_any_supported_kind():
    for obj in (None, 3, "s", [], {}, (), 1.5, True):
        assert roundtrip(obj) == obj and type(roundtrip(obj)) is type(obj)


def test_numpy_arrays_and_scalars_stay_numpy():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = roundtrip({"a": a, "s": np.float32(1.5), "b": np.bool_(True)})
    assert type(out["a"]) is np.ndarray and out["a"].dtype == np.int32
    np.testing.assert_array_equal(out["a"], a)
    assert type(out["s"]) is np.float32 and out["s"] == 1.5
    assert type(out["b"]) is np.bool_ and out["b"]


def test_ordered_dict_keeps_order_and_metadata():
    sd = collections.OrderedDict([("z.weight", torch.ones(2)), ("a.bias", torch.zeros(1))])
    sd._metadata = {"": {"version": 1}, "z": {"version": 2}}
    out = roundtrip(sd)
    assert type(out) is collections.OrderedDict and list(out) == ["z.weight", "a.bias"]
    assert out._metadata == sd._metadata


def test_state_dict_round_trip():
    torch.manual_seed(0)
    sd = collections.OrderedDict([("fc1.weight", torch.randn(4, 3)), ("fc1.bias", torch.randn(4)),
                                  ("bn.running_mean", torch.zeros(4)), ("bn.num_batches_tracked", torch.tensor(7))])
    out = roundtrip(sd)
    assert list(out) == list(sd)
    for k in sd:
        assert out[k].dtype is sd[k].dtype and out[k].tolist() == sd[k].tolist()


def test_optimizer_style_state_dict_with_int_keys():
    state = {"state": {0: {"step": torch.tensor(3.0), "exp_avg": torch.ones(2), "exp_avg_sq": torch.ones(2)}},
             "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0, "amsgrad": False,
                               "foreach": None, "params": [0, 1]}]}
    out = roundtrip(state)
    assert list(out["state"]) == [0]
    assert out["param_groups"][0]["betas"] == (0.9, 0.999) and out["param_groups"][0]["foreach"] is None
    assert out["state"][0]["exp_avg"].tolist() == [1.0, 1.0]


def test_shared_tensors_are_saved_once_and_loaded_shared():
    t = torch.arange(4.0)
    data = saved_bytes({"a": t, "b": [t, t], "c": torch.arange(4.0)})
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert len([n for n in zf.namelist() if n.endswith(".npy")]) == 2
    out = load_bytes(data)
    assert out["a"] is out["b"][0] is out["b"][1] and out["c"] is not out["a"]


def test_requires_grad_is_restored_on_a_leaf():
    w = torch.ones(2, requires_grad=True)
    out = roundtrip({"w": w, "y": w * 2, "n": torch.ones(2)})
    assert out["w"].requires_grad and out["w"].is_leaf and out["w"].grad_fn is None
    assert out["y"].requires_grad and out["y"].is_leaf
    assert not out["n"].requires_grad


def test_parameters_load_as_parameters():
    from mindtorch_v2.nn.parameter import Parameter
    p = Parameter(torch.ones(3))
    frozen = Parameter(torch.zeros(1), requires_grad=False)
    out = roundtrip({"p": p, "frozen": frozen, "plain": torch.ones(1)})
    assert type(out["p"]) is Parameter and out["p"].requires_grad
    assert type(out["frozen"]) is Parameter and not out["frozen"].requires_grad
    assert type(out["plain"]) is not Parameter


def test_same_object_gives_the_same_bytes():
    obj = {"w": torch.arange(3.0), "s": "x"}
    assert saved_bytes(obj) == saved_bytes(obj)


# ---------------------------------------------------------------------------
# files and locations


def test_save_and_load_with_paths(tmp_path):
    t = torch.arange(5)
    mt_save(t, str(tmp_path / "a.pt"))
    mt_save(t, tmp_path / "b.pt")  # os.PathLike
    assert torch.load(str(tmp_path / "a.pt")).tolist() == [0, 1, 2, 3, 4]
    assert torch.load(tmp_path / "b.pt", weights_only=True).tolist() == [0, 1, 2, 3, 4]
    assert torch.load(tmp_path / "b.pt", weights_only=False).tolist() == [0, 1, 2, 3, 4]


def test_save_and_load_with_real_file_objects(tmp_path):
    path = tmp_path / "f.pt"
    with open(path, "wb") as f:
        mt_save({"x": torch.ones(2)}, f)
    with open(path, "rb") as f:
        assert torch.load(f)["x"].tolist() == [1.0, 1.0]


def test_load_from_an_unseekable_stream():
    class Stream(io.RawIOBase):
        def __init__(self, data):
            self._inner = io.BytesIO(data)

        def readable(self):
            return True

        def seekable(self):
            return False

        def readinto(self, b):
            return self._inner.readinto(b)

    assert torch.load(Stream(saved_bytes(torch.ones(2)))).tolist() == [1.0, 1.0]


def test_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        torch.load(tmp_path / "nope.pt")


def test_map_location_cpu_meta_dict_and_callable():
    t = torch.arange(3.0)
    assert roundtrip(t, map_location="cpu").device == torch.device("cpu")
    assert roundtrip(t, map_location=torch.device("cpu")).tolist() == [0.0, 1.0, 2.0]
    meta = roundtrip(t, map_location="meta")
    assert meta.device.type == "meta" and meta.shape == torch.Size([3])
    assert roundtrip(t, map_location={"cpu": "meta"}).device.type == "meta"
    seen = []
    out = roundtrip(t, map_location=lambda storage, loc: seen.append(loc) or storage)
    assert seen == ["cpu"] and out.tolist() == [0.0, 1.0, 2.0]
    assert roundtrip(t, map_location=lambda storage, loc: None).tolist() == [0.0, 1.0, 2.0]


def test_meta_tensors_round_trip_without_data():
    m = torch.empty(2, 5, dtype=torch.float16, device="meta")
    data = saved_bytes(m)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert not [n for n in zf.namelist() if n.endswith(".npy")]
    out = load_bytes(data)
    assert out.device.type == "meta" and out.shape == torch.Size([2, 5]) and out.dtype == torch.float16


def test_unsupported_objects_fail_at_save_time_naming_the_place(tmp_path):
    class Custom:
        pass

    path = tmp_path / "x.pt"
    with pytest.raises(TypeError, match=r"Custom at obj\['a'\]\[1\]"):
        mt_save({"a": [1, Custom()]}, path)
    assert not path.exists()  # nothing is written when the object cannot be saved
    with pytest.raises(TypeError, match="numpy array of dtype object"):
        mt_save(np.array([object()]), io.BytesIO())
    cyclic = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="contains itself"):
        mt_save(cyclic, io.BytesIO())


# ---------------------------------------------------------------------------
# broken and hostile files


def test_truncated_files_are_rejected():
    data = saved_bytes({"w": torch.ones(100)})
    for cut in (len(data) - 1, len(data) // 2, 10, 1):
        with pytest.raises(RuntimeError, match=INVALID):
            load_bytes(data[:cut])


def test_empty_and_random_files_are_rejected(tmp_path):
    path = tmp_path / "empty.pt"
    path.write_bytes(b"")
    with pytest.raises(RuntimeError, match=rf"empty.pt {INVALID}: the file is empty"):
        torch.load(path)
    with pytest.raises(RuntimeError, match=rf"{INVALID}: it is neither a zip archive"):
        load_bytes(np.random.default_rng(0).bytes(1000))


def test_corrupted_tensor_bytes_fail_the_crc_check():
    data = bytearray(saved_bytes(torch.zeros(64)))
    at = bytes(data).index(b"\x00" * 64)  # inside the stored .npy payload
    data[at + 10] = 0x7F
    with pytest.raises(RuntimeError, match=INVALID):
        load_bytes(bytes(data))


_EXECUTED = []


class _Evil:
    def __reduce__(self):
        return (_EXECUTED.append, ("pwned",))




def test_an_object_array_in_the_npy_is_refused_without_running_it():
    payload = npy(np.array([_Evil()], dtype=object), allow_pickle=True)
    data = archive({DOC: doc([record("float32", (1,))], {"tensor": 0}),
                    "mindtorch_checkpoint/tensors/0.npy": payload})
    with pytest.raises(RuntimeError, match=f"{INVALID}: .*holds dtype object"):
        load_bytes(data)
    data = archive({DOC: doc([{"kind": "ndarray", "dtype": "|O", "shape": [1]}], {"ndarray": 0}),
                    "mindtorch_checkpoint/tensors/0.npy": payload})
    with pytest.raises(RuntimeError, match=f"{INVALID}: .*unsupported dtype"):
        load_bytes(data)
    assert _EXECUTED == []


@pytest.mark.parametrize("root,problem", [
    ({"__class__": "os.system", "args": ["echo hi"]}, "expected one key"),
    ({"__reduce__": ["os", "system"]}, "unknown entry '__reduce__'"),
    ({"tensor": 5}, "tensor reference 5 .* out of range"),
    ({"tensor": "0"}, "tensor reference '0'"),
    ({"dict": [[[1, 2], 3]]}, "unhashable dict key"),
    ({"dtype": "object"}, "unknown dtype"),
    ({"float": "1e400"}, "invalid float"),
    ({"device": "tpu"}, "invalid device"),
    ({"set": [[1]]}, "unhashable item"),
])
def test_hostile_json_structures_are_rejected(root, problem):
    with pytest.raises(RuntimeError, match=f"{INVALID}: {problem}"):
        load_bytes(archive({DOC: doc([], root)}))


def test_json_format_problems_are_named():
    cases = [
        ({DOC: b"{not json"}, "not valid JSON"),
        ({DOC: b'{"format": "mindtorch_v2.save", "version": 1, "tensors": [], "root": NaN}'}, "NaN"),
        ({DOC: b'{"format": "x", "version": 1, "tensors": [], "root": null}'}, "does not describe"),
        ({DOC: doc([], None).replace('"version": 1', '"version": 99')}, "unsupported format version 99"),
        ({DOC: b'{"format": "mindtorch_v2.save", "format": "mindtorch_v2.save"}'}, "repeats the key"),
        ({DOC: b"[" * 100000 + b"]" * 100000}, ""),
        ({"other.txt": b"hello"}, "the archive has no .*data.pkl"),
    ]
    for entries, problem in cases:
        with pytest.raises(RuntimeError, match=f"{INVALID}: .*{problem}"):
            load_bytes(archive(entries))


def test_npy_that_disagrees_with_its_record_is_rejected():
    good = npy(np.zeros(2, np.float32))
    cases = [
        ([record("float32", (3,))], {"mindtorch_checkpoint/tensors/0.npy": good}, "holds shape"),
        ([record("int32", (2,))], {"mindtorch_checkpoint/tensors/0.npy": good}, "holds dtype"),
        ([record("float32", (2,))], {}, "is missing"),
        ([record("float32", (2,))], {"mindtorch_checkpoint/tensors/0.npy": good + b"extra"}, "bytes, expected"),
        ([record("float32", (2,))], {"mindtorch_checkpoint/tensors/0.npy": good[:-4]}, "bytes, expected"),
        ([dict(record(), requires_grad=1)], {}, "non-boolean"),
        ([dict(record("int64"), requires_grad=True)], {}, "requires grad but has dtype"),
        ([dict(record(), shape=[-1])], {}, "invalid shape"),
        ([dict(record(), extra=1)], {}, "has keys"),
        ([{"kind": "ndarray", "dtype": "<f4", "shape": [2]}], {}, "is not a tensor record"),
    ]
    for tensors, files, problem in cases:
        with pytest.raises(RuntimeError, match=f"{INVALID}: .*{problem}"):
            load_bytes(archive({DOC: doc(tensors, {"tensor": 0}), **files}))


def test_an_npy_declaring_a_huge_shape_is_rejected_before_allocating():
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10 ** 12,)})
    data = archive({DOC: doc([record("float64", (10 ** 12,))], {"tensor": 0}),
                    "mindtorch_checkpoint/tensors/0.npy": header.getvalue() + b"\0" * 16})
    with pytest.raises(RuntimeError, match="bytes, expected"):
        load_bytes(data)


def test_error_names_the_file(tmp_path):
    path = tmp_path / "model.pt"
    path.write_bytes(b"garbage!")
    with pytest.raises(RuntimeError, match=r"model\.pt is not a valid checkpoint"):
        torch.load(path)
