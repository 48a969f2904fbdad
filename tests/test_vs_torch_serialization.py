"""Real PyTorch loads the checkpoints we write: recorded once where torch is installed, checked in CI without it.

Recording (`python tests/record_goldens.py serialization`) writes our files with mindtorch_v2, loads them with
real PyTorch (`weights_only=True`) and stores what torch saw together with the
sha256 of the bytes it read. The test writes the same objects again and requires the same bytes (so the file
torch accepted is the file we still write) and the same contents read back by mindtorch_v2.
"""
import hashlib
import io

import numpy as np

import mindtorch_v2 as mt
from _goldens import Goldens, golden_fixtures, torch_lib
from test_serialization_torch_format import sample

GOLDEN = Goldens("vs_torch_serialization")
_golden_file, _golden_case = golden_fixtures(GOLDEN)


def _bytes(obj, **kw):
    buf = io.BytesIO()
    mt.save(obj, buf, **kw)
    return buf.getvalue()


def summary(L, r):
    """What a library sees in a loaded sample(): geometry, sharing, types and values, as plain data."""
    def values(t):
        return np.asarray(t.detach().float().numpy() if str(t.dtype).endswith(("bfloat16", "e4m3fn")) else
                          t.detach().numpy()).tolist()
    out = {"t_stride": list(r["t"].stride()), "t_offset": r["t"].storage_offset(),
           "shared": r["t"].untyped_storage().data_ptr() == r["base"].untyped_storage().data_ptr(),
           "t": values(r["t"]), "parameter": isinstance(r["p"], L.nn.Parameter), "size": list(r["size"]),
           "dtype": str(r["dtype"]).replace("torch.", "")}
    for key in ("float64", "float16", "bfloat16", "int8", "int64", "bool", "uint8"):
        out[key] = [str(r[key].dtype).replace("torch.", ""), values(r[key])]
    out["complex64"] = [[z.real, z.imag] for z in r["complex64"].tolist()]
    return out


def check(name, data, load_kw):
    """torch's recorded view of `data` (our bytes) equals mindtorch_v2's, and the bytes are unchanged."""
    digest = hashlib.sha256(data).hexdigest()
    want = GOLDEN(lambda: {"sha256": digest,
                           "torch": summary(torch_lib(), torch_lib().load(io.BytesIO(data), **load_kw))})
    if GOLDEN.recording:
        return
    assert want["sha256"] == digest, f"{name}: we no longer write the bytes real PyTorch was checked to load"
    assert summary(mt, mt.load(io.BytesIO(data))) == want["torch"], name


def test_real_torch_loads_our_zip_checkpoint_weights_only():
    check("zip", _bytes(sample()), {"weights_only": True})


def test_real_torch_loads_our_legacy_checkpoint_weights_only():
    legacy = sample()
    del legacy["uint16"], legacy["float8_e4m3fn"]  # PyTorch itself cannot load these from the legacy format
    check("legacy", _bytes(legacy, _use_new_zipfile_serialization=False), {"weights_only": True})


def test_real_torch_loads_our_meta_tensors_and_parameter_state():
    p = mt.nn.Parameter(mt.ones(2))
    p.note = "tied"
    data = _bytes({"p": p, "m": mt.empty(2, 3, device="meta")})
    digest = hashlib.sha256(data).hexdigest()

    def seen(L, **kw):
        r = L.load(io.BytesIO(data), **kw)
        return {"note": getattr(r["p"], "note", None), "parameter": isinstance(r["p"], L.nn.Parameter),
                "meta": r["m"].device.type == "meta", "shape": list(r["m"].shape)}
    want = GOLDEN(lambda: {"sha256": digest, "full": seen(torch_lib(), weights_only=False),
                           "weights_only": seen(torch_lib(), weights_only=True)})
    if GOLDEN.recording:
        return
    assert want["sha256"] == digest
    assert seen(mt, weights_only=False) == want["full"] == {"note": "tied", "parameter": True, "meta": True,
                                                            "shape": [2, 3]}
    assert want["weights_only"]["meta"] and want["weights_only"]["shape"] == [2, 3]
