"""torch.save / torch.load in PyTorch's checkpoint format: fixtures written by real PyTorch, files real PyTorch
loads, and the adversarial cases (bounds, corrupt containers, code in pickles)."""
import collections
import io
import os
import pickle
import pickletools
import struct
import zipfile

import numpy as np
import pytest

import mindtorch_v2 as torch

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "torch_checkpoints")


def fixture(name):
    return os.path.join(FIXTURES, name)


def saved(obj, **kw):
    buf = io.BytesIO()
    torch.save(obj, buf, **kw)
    return buf.getvalue()


def load_bytes(data, **kw):
    return torch.load(io.BytesIO(data), **kw)


def shares(a, b):
    return a._storage is b._storage


# ---------------------------------------------------------------------------
# fixtures written by PyTorch

EXPECTED = {
    "float64": ([1.5, -2.25], torch.float64), "float16": ([0.5, 65504.0], torch.float16),
    "bfloat16": ([1.0, -3.0], torch.bfloat16), "complex64": ([1 + 2j, -3j], torch.complex64),
    "complex128": ([0.5 - 1j], torch.complex128), "bool": ([True, False, True], torch.bool),
    "int8": ([-128, 127], torch.int8), "uint8": ([0, 255], torch.uint8), "int16": ([-300, 300], torch.int16),
    "int32": ([-(2 ** 31), 7], torch.int32), "int64": ([2 ** 40, -1], torch.int64),
    "uint16": ([65535, 1], torch.uint16), "float8_e4m3fn": ([1.0, -2.0], torch.float8_e4m3fn),
}


@pytest.mark.parametrize("name", ["state_dict.pt", "legacy_state_dict.pt"])
def test_torch_written_state_dict_loads_with_values_dtypes_strides_and_sharing(name):
    sd = torch.load(fixture(name))
    assert type(sd) is collections.OrderedDict
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    np.testing.assert_array_equal(np.asarray(sd["base"]), base)
    assert sd["transposed"].stride() == (1, 6) and sd["transposed"].storage_offset() == 0
    np.testing.assert_array_equal(np.asarray(sd["transposed"]), base.T)
    assert sd["offset_view"].stride() == (6, 1) and sd["offset_view"].storage_offset() == 8
    np.testing.assert_array_equal(np.asarray(sd["offset_view"]), base[1:, 2:5])
    assert shares(sd["base"], sd["transposed"]) and shares(sd["base"], sd["offset_view"])
    sd["base"][1, 2] = 100.0  # sharing is real: writes show through the other views
    assert sd["transposed"][2, 1].item() == 100.0 and sd["offset_view"][0, 0].item() == 100.0
    for key, (values, dtype) in EXPECTED.items():
        if key not in sd:
            assert name.startswith("legacy") and key in ("uint16", "float8_e4m3fn")
            continue
        assert sd[key].dtype is dtype, key
        np.testing.assert_array_equal(np.asarray(sd[key].to(torch.float64) if dtype in (
            torch.bfloat16, torch.float8_e4m3fn) else sd[key]), np.array(values), err_msg=key)
    assert sd["scalar"].shape == torch.Size([]) and sd["scalar"].item() == 3.0


def test_torch_written_nested_containers_parameter_size_dtype_device():
    r = torch.load(fixture("nested.pt"))
    assert isinstance(r["param"], torch.nn.Parameter) and r["param"].requires_grad
    assert r["param"].tolist() == [1.0, 2.0]
    assert r["list"][0].dtype is torch.int64 and r["list"][1] == 3
    assert type(r["tuple"]) is tuple and r["tuple"][1:] == ("x", 2.5)
    assert r["size"] == torch.Size([2, 3]) and type(r["size"]) is torch.Size
    assert r["dtype"] is torch.float16 and r["device"] == torch.device("cpu")
    assert type(r["od"]) is collections.OrderedDict and list(r["od"]) == ["b", "a"]
    assert r["bytes"] == b"\x00\xff"


def test_mmap_gives_memory_mapped_read_only_storages_with_the_same_values():
    r = torch.load(fixture("state_dict.pt"), mmap=True)
    buf = r["base"]._storage.value._buf
    assert isinstance(buf.base if buf.base is not None else buf, np.memmap) or isinstance(buf, np.memmap)
    np.testing.assert_array_equal(np.asarray(r["offset_view"]), np.arange(24.).reshape(4, 6)[1:, 2:5])
    r["base"].add_(1)  # writing copies: the file is never modified
    assert torch.load(fixture("state_dict.pt"))["base"][0, 0].item() == 0.0


def test_mmap_refuses_the_legacy_format():
    with pytest.raises(RuntimeError, match="mmap can only be used"):
        torch.load(fixture("legacy_state_dict.pt"), mmap=True)


@pytest.mark.parametrize("location", ["cpu", torch.device("cpu"), {"cpu": "meta"}, "meta",
                                      lambda s, loc: None, lambda s, loc: s, lambda s, loc: s.cpu()])
def test_map_location_variants(location):
    r = torch.load(fixture("state_dict.pt"), map_location=location)
    want = "meta" if location == "meta" or isinstance(location, dict) else "cpu"
    assert r["base"].device.type == want


def test_map_location_callable_gets_torchs_arguments():
    seen = []
    r = torch.load(fixture("state_dict.pt"), map_location=lambda s, loc: seen.append((type(s).__name__, loc)))
    assert seen and all(kind == "UntypedStorage" and loc == "cpu" for kind, loc in seen)
    assert r["base"].device.type == "cpu"
    with pytest.raises((TypeError, RuntimeError), match="expected a storage or None"):
        torch.load(fixture("state_dict.pt"), map_location=lambda s, loc: 3)


# ---------------------------------------------------------------------------
# files we write

def sample():
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    out = collections.OrderedDict(base=base, t=base.t()[1:], p=torch.nn.Parameter(torch.ones(2)),
                                  size=torch.Size([2, 3]), dtype=torch.bfloat16, dev=torch.device("cpu"))
    for key, (values, dtype) in EXPECTED.items():
        out[key] = torch.tensor(values, dtype=dtype)
    return out


def check_sample(r):
    np.testing.assert_array_equal(np.asarray(r["t"]), np.arange(12.).reshape(3, 4).T[1:])
    assert r["t"].stride() == (1, 4) and r["t"].storage_offset() == 1 and shares(r["base"], r["t"])
    assert isinstance(r["p"], torch.nn.Parameter) and r["size"] == torch.Size([2, 3])
    assert r["dtype"] is torch.bfloat16
    for key, (values, dtype) in EXPECTED.items():
        assert r[key].dtype is dtype


def test_round_trip_zip():
    check_sample(load_bytes(saved(sample())))


def test_round_trip_legacy():
    data = saved(sample(), _use_new_zipfile_serialization=False)
    assert data[:1] == b"\x80" and not zipfile.is_zipfile(io.BytesIO(data))
    check_sample(load_bytes(data))


def test_written_zip_has_torchs_layout_aligned_records_and_globals():
    data = saved(sample())
    zf = zipfile.ZipFile(io.BytesIO(data))
    names = zf.namelist()
    assert names[:4] == ["archive/data.pkl", "archive/.format_version", "archive/.storage_alignment",
                         "archive/byteorder"]
    assert names[-2:] == ["archive/version", "archive/.data/serialization_id"]
    assert zf.read("archive/version") == b"3\n" and zf.read("archive/byteorder") == b"little"
    for info in zf.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
        n, m = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
        assert (info.header_offset + 30 + n + m) % 64 == 0, info.filename
    assert zf.read("archive/data/0") == np.arange(12, dtype="<f4").tobytes()  # views share one record
    globals_ = set()
    for op, arg, _ in pickletools.genops(zf.read("archive/data.pkl")):
        if op.name == "GLOBAL":
            globals_.add(arg)
        assert op.proto <= 2
    assert globals_ == {"torch._utils _rebuild_tensor_v2", "torch._utils _rebuild_tensor_v3",
                        "torch._utils _rebuild_parameter", "collections OrderedDict", "torch Size", "torch device",
                        "torch FloatStorage", "torch bfloat16", "torch BFloat16Storage", "torch DoubleStorage",
                        "torch HalfStorage", "torch ComplexFloatStorage", "torch ComplexDoubleStorage",
                        "torch BoolStorage", "torch CharStorage", "torch ByteStorage", "torch ShortStorage",
                        "torch IntStorage", "torch LongStorage", "torch.storage UntypedStorage", "torch uint16",
                        "torch float8_e4m3fn"}


# ---------------------------------------------------------------------------
# weights_only: nothing runs code

def evil_pickle(marker, how):
    """A zip checkpoint whose data.pkl would create `marker` if code ran."""
    command = f"open({str(marker)!r}, 'w').close()"
    if how == "system":
        body = b"cos\nsystem\n(X" + struct.pack("<I", len(f"touch {marker}")) + f"touch {marker}".encode() + b"tR."
    elif how == "exec":
        body = b"cbuiltins\nexec\n(X" + struct.pack("<I", len(command)) + command.encode() + b"tR."
    else:  # a class allowed nowhere, through STACK_GLOBAL and protocol 4
        class_path = b"\x8c\x08builtins\x94\x8c\x04eval\x94\x93\x94"
        body = b"\x80\x04" + class_path + b"X" + struct.pack("<I", len(command)) + command.encode() + b"\x85R."
    if not body.startswith(b"\x80"):
        body = b"\x80\x02" + body
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", body)
        zf.writestr("archive/version", "3\n")
    return buf.getvalue()


@pytest.mark.parametrize("how,message", [("system", "whose module os is blocked"),
                                         ("exec", "Unsupported global: GLOBAL builtins.exec was not an allowed"),
                                         ("eval", "Unsupported global: GLOBAL builtins.eval")])
def test_weights_only_never_runs_code(tmp_path, how, message):
    marker = tmp_path / "marker"
    with pytest.raises(pickle.UnpicklingError, match=message):
        load_bytes(evil_pickle(marker, how))
    assert not marker.exists()


def test_weights_only_false_unpickles_fully(tmp_path):
    marker = tmp_path / "marker"
    load_bytes(evil_pickle(marker, "exec"), weights_only=False)
    assert marker.exists()


def test_weights_only_error_names_the_global_and_safe_globals_allow_it():
    data = saved({"c": collections.Counter(a=1)})
    with pytest.raises(pickle.UnpicklingError, match=r"(?s)Weights only load failed.*collections\.Counter"):
        load_bytes(data)
    with torch.serialization.safe_globals([collections.Counter]):
        assert load_bytes(data)["c"] == collections.Counter(a=1)
    with pytest.raises(pickle.UnpicklingError):
        load_bytes(data)
    torch.serialization.add_safe_globals([collections.Counter])
    try:
        assert collections.Counter in torch.serialization.get_safe_globals()
        assert load_bytes(data)["c"]["a"] == 1
    finally:
        torch.serialization.clear_safe_globals()
    assert torch.serialization.get_safe_globals() == []


# ---------------------------------------------------------------------------
# memory safety

def checkpoint(body, records, compress=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compress) as zf:
        zf.writestr("archive/data.pkl", body)
        for key, data in records.items():
            zf.writestr(f"archive/data/{key}", data)
        zf.writestr("archive/version", "3\n")
    return buf.getvalue()


def tensor_pickle(numel, offset, size, stride):
    """data.pkl of one float tensor over storage '0' of `numel` elements, written with our own pickler."""
    p = io.BytesIO()
    p.write(b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
            b"X\x01\x00\x00\x000X\x03\x00\x00\x00cpu")
    p.write(pickle.dumps(numel, 2)[2:-1])
    p.write(b"tQ" + pickle.dumps(offset, 2)[2:-1] + pickle.dumps(tuple(size), 2)[2:-1]
            + pickle.dumps(tuple(stride), 2)[2:-1] + b"\x89ccollections\nOrderedDict\n)Rtq\x00R.")
    return p.getvalue()


def test_handmade_pickle_loads_when_in_bounds():
    t = load_bytes(checkpoint(tensor_pickle(2, 0, [2], [1]), {"0": np.array([1, 2], "<f4").tobytes()}))
    assert t.tolist() == [1.0, 2.0]
    t = load_bytes(checkpoint(tensor_pickle(1, 0, [10 ** 6], [0]), {"0": np.array([7], "<f4").tobytes()}))
    assert t.shape == torch.Size([10 ** 6]) and t[999_999].item() == 7.0  # stride 0 over one element: fine


@pytest.mark.parametrize("numel,offset,size,stride", [(0, 0, [1], [1]), (1, 0, [10 ** 6], [1]), (4, 3, [2], [1]),
                                                      (4, 0, [2, 2], [3, 1]), (4, 5, [0], [1])])
def test_view_past_its_storage_raises(numel, offset, size, stride):
    data = checkpoint(tensor_pickle(numel, offset, size, stride), {"0": b"\x00" * 4 * numel})
    with pytest.raises(RuntimeError, match="out of bounds"):
        load_bytes(data)


def test_storage_declaring_more_than_the_file_raises_without_allocating():
    data = checkpoint(tensor_pickle(2 ** 38, 0, [1], [1]), {"0": b"\x00" * 4})
    with pytest.raises(RuntimeError, match="declares"):
        load_bytes(data)


def test_record_size_not_matching_its_storage_raises():
    with pytest.raises(RuntimeError, match="declares 8 bytes"):
        load_bytes(checkpoint(tensor_pickle(2, 0, [2], [1]), {"0": b"\x00" * 12}))


def test_member_size_that_lies_raises_before_allocating():
    data = bytearray(saved(torch.zeros(4)))
    zf = zipfile.ZipFile(io.BytesIO(bytes(data)))
    info = [i for i in zf.infolist() if i.filename == "archive/data/0"][0]
    # patch the central directory entry of the record: 1 TiB - 1 in both size fields (zip64 not needed)
    pos = bytes(data).find(b"PK\x01\x02" , 0)
    while True:
        n = struct.unpack("<H", data[pos + 28:pos + 30])[0]
        if data[pos + 46:pos + 46 + n] == info.filename.encode():
            break
        pos = bytes(data).find(b"PK\x01\x02", pos + 4)
    data[pos + 20:pos + 28] = struct.pack("<II", 0xFFFFFFF0, 0xFFFFFFF0)
    with pytest.raises(RuntimeError):
        load_bytes(bytes(data))


def test_compressed_members_raise():
    data = checkpoint(tensor_pickle(2, 0, [2], [1]), {"0": b"\x00" * 8}, compress=zipfile.ZIP_DEFLATED)
    with pytest.raises(RuntimeError, match="compressed"):
        load_bytes(data)


def test_duplicate_member_names_raise():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf, pytest.warns(UserWarning):
        zf.writestr("archive/data.pkl", tensor_pickle(2, 0, [2], [1]))
        zf.writestr("archive/data/0", b"\x00" * 8)
        zf.writestr("archive/data/0", b"\x01" * 8)
    with pytest.raises(RuntimeError, match="twice"):
        load_bytes(buf.getvalue())


@pytest.mark.parametrize("fmt", [True, False])
def test_every_truncation_raises(fmt):
    data = saved({"a": torch.arange(6.).reshape(2, 3), "b": [torch.ones(2, dtype=torch.int8)]},
                 _use_new_zipfile_serialization=fmt)
    for cut in range(0, len(data), 7):
        with pytest.raises((RuntimeError, pickle.UnpicklingError)):
            load_bytes(data[:cut])


def test_bit_flips_raise_or_load_without_harm():
    data = saved({"a": torch.arange(6.).reshape(2, 3), "b": torch.ones(3, dtype=torch.int8)})
    for pos in range(0, len(data), 3):
        flipped = bytearray(data)
        flipped[pos] ^= 0x10
        try:
            load_bytes(bytes(flipped))
        except (RuntimeError, pickle.UnpicklingError):
            pass


def test_corrupt_zip_error_names_the_file(tmp_path):
    path = tmp_path / "broken.pt"
    data = saved(torch.zeros(3))
    path.write_bytes(data[:-10])
    with pytest.raises(RuntimeError, match="broken.pt"):
        torch.load(path)


# ---------------------------------------------------------------------------
# the earlier mindtorch format

def test_files_of_the_earlier_mindtorch_format_still_load():
    buf = io.BytesIO()
    torch.serialization.mindtorch_format.save({"w": torch.arange(3.)}, buf)
    buf.seek(0)
    assert torch.load(buf)["w"].tolist() == [0.0, 1.0, 2.0]


def test_meta_tensors_and_parameter_attributes_travel_as_torch_writes_them():
    p = torch.nn.Parameter(torch.ones(2))
    p.note = "tied"
    m = torch.empty(2, 3, device="meta")
    data = saved({"p": p, "m": m, "mt": m.t()})
    globals_ = {arg for op, arg, _ in pickletools.genops(zipfile.ZipFile(io.BytesIO(data)).read("archive/data.pkl"))
                if op.name == "GLOBAL"}
    assert {"torch._utils _rebuild_meta_tensor_no_storage", "torch._utils _rebuild_parameter_with_state"} <= globals_
    r = load_bytes(data)
    assert isinstance(r["p"], torch.nn.Parameter) and r["p"].note == "tied"
    assert r["m"].device.type == "meta" and r["m"].shape == (2, 3) and r["mt"].stride() == (1, 3)
    with pytest.raises(RuntimeError, match="negative size"):
        torch.serialization.reading.rebuild_meta_tensor(torch.float32, (-1,), (1,))


def test_protocol_2_builtin_names_load_under_weights_only():
    """torch.save writes protocol 2, where set/frozenset are named __builtin__.set: allowed as builtins.set."""
    import io
    buf = io.BytesIO()
    torch.save({"s": {1, 2}, "f": frozenset([3]), "t": torch.ones(2)}, buf)
    assert b"__builtin__" in buf.getvalue()
    buf.seek(0)
    got = torch.load(buf)
    assert got["s"] == {1, 2} and got["f"] == frozenset([3]) and torch.equal(got["t"], torch.ones(2))


def test_whole_module_loads_with_its_classes_allowlisted():
    import io
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU())
    buf = io.BytesIO()
    torch.save(model, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        torch.load(buf)
    buf.seek(0)
    classes = [torch.nn.Sequential, torch.nn.Linear, torch.nn.ReLU]
    with torch.serialization.safe_globals(classes):
        loaded = torch.load(buf)
    x = torch.ones(1, 2)
    assert torch.equal(loaded(x), model(x))
