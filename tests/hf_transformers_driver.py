"""Run HF transformers end to end on whatever `import torch` is, and write what happened to a pickle file.

    python tests/hf_transformers_driver.py OUT.pkl             # real PyTorch (recording the goldens)
    python tests/hf_transformers_driver.py OUT.pkl mindtorch   # mindtorch_v2 installed as torch

tests/test_vs_torch_transformers.py runs it in a fresh interpreter (install_as_torch() changes `import torch`
for the whole process). GPT-2, BERT and a Llama-architecture model are built from small configs; every weight
comes from numpy with a fixed seed (never from either library's random generator), so both libraries run the
same model. Each model goes through: a training-mode forward with labels, `loss.backward()`, one AdamW step,
eval-mode logits of a padded batch, greedy `generate` on a left-padded batch with and without the KV cache
(with the scores), sampling `generate` (its properties only: PyTorch's sampled tokens depend on its RNG
stream), and `save_pretrained` / `from_pretrained` through a local directory in safetensors format.
The result is plain data: numpy arrays, python numbers, strings, bools, lists and dicts.
"""
import os
import pickle
import sys
import tempfile

import numpy as np

VOCAB = 48
PAD, BOS, EOS = 0, 1, 2


def configs(transformers):
    common = dict(vocab_size=VOCAB, pad_token_id=PAD, bos_token_id=BOS, eos_token_id=EOS)
    return {
        "gpt2": (transformers.GPT2LMHeadModel, transformers.GPT2Config(
            n_positions=32, n_embd=16, n_layer=2, n_head=2, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
            **common)),
        "llama": (transformers.LlamaForCausalLM, transformers.LlamaConfig(
            hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            max_position_embeddings=32, rope_theta=10000.0, tie_word_embeddings=False, **common)),
        "bert": (transformers.BertForMaskedLM, transformers.BertConfig(
            hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
            max_position_embeddings=32, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
            vocab_size=VOCAB, pad_token_id=PAD)),
    }


def numpy_weights(model, seed):
    """Every parameter set from numpy (seeded; buffers such as rotary frequencies are computed): name -> array."""
    rng = np.random.RandomState(seed)
    import torch
    used = {}
    with torch.no_grad():
        for name, p in model.named_parameters():
            a = rng.standard_normal(tuple(p.shape)).astype(np.float32) * np.float32(0.3)
            if name.endswith(("norm.weight", "LayerNorm.weight", "ln_1.weight", "ln_2.weight", "ln_f.weight")):
                a = a + np.float32(1.0)  # norms stay near the identity, so the logits stay in range
            p.copy_(torch.from_numpy(a))
            used[name] = a
    return used


def arr(t):
    return t.detach().numpy().copy()


def batch(seed, pad_left):
    """Token ids (2, 7) from numpy and an attention mask padding the first row by 2 (left or right)."""
    rng = np.random.RandomState(seed)
    ids = rng.randint(3, VOCAB, size=(2, 7)).astype(np.int64)
    mask = np.ones((2, 7), np.int64)
    pad = slice(0, 2) if pad_left else slice(5, 7)
    mask[0, pad] = 0
    ids[0, pad] = PAD
    return ids, mask


def train_step(torch, model, ids, labels, mask):
    """Loss, logits and gradients of a training-mode forward, then the parameters after one AdamW step."""
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    out = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                labels=torch.from_numpy(labels))
    out.loss.backward()
    grads = {n: arr(p.grad) for n, p in model.named_parameters()}
    opt.step()
    opt.zero_grad()
    after = {n: arr(p) for n, p in model.named_parameters()}
    return {"loss": out.loss.item(), "train_logits": arr(out.logits), "grads": grads, "after_step": after}


def generation(torch, model, ids, mask):
    """Greedy generate on a left-padded batch (KV cache on and off, with scores) and sampling's properties."""
    ids_t, mask_t = torch.from_numpy(ids), torch.from_numpy(mask)
    kw = dict(attention_mask=mask_t, max_new_tokens=6, pad_token_id=PAD, eos_token_id=None)
    greedy = model.generate(ids_t, do_sample=False, use_cache=True, output_scores=True,
                            return_dict_in_generate=True, **kw)
    no_cache = model.generate(ids_t, do_sample=False, use_cache=False, **kw)
    out = {"greedy": arr(greedy.sequences), "greedy_scores": np.stack([arr(s) for s in greedy.scores]),
           "greedy_no_cache": arr(no_cache)}
    torch.manual_seed(1234)
    s1 = model.generate(ids_t, do_sample=True, top_k=8, temperature=0.9, **kw)
    torch.manual_seed(1234)
    s2 = model.generate(ids_t, do_sample=True, top_k=8, temperature=0.9, **kw)
    samples = [model.generate(ids_t, do_sample=True, **kw) for _ in range(3)]
    top1 = model.generate(ids_t, do_sample=True, top_k=1, **kw)
    out["sample"] = {
        "shape": list(s1.shape), "dtype": str(s1.dtype),
        "prompt_kept": bool((s1[:, :ids.shape[1]] == ids_t).all()),
        "in_vocab": bool(((s1 >= 0) & (s1 < VOCAB)).all()),
        "same_seed_same_tokens": bool(torch.equal(s1, s2)),
        "top_k_1_is_greedy": bool(torch.equal(top1, greedy.sequences)),
        "new_tokens": [arr(s)[:, ids.shape[1]:] for s in [s1] + samples],
    }
    return out


def round_trip(torch, cls, model, ids, mask):
    """save_pretrained then from_pretrained through a local directory (safetensors): files, weights, logits."""
    from safetensors.numpy import load_file
    model.eval()
    with tempfile.TemporaryDirectory() as d:
        model.save_pretrained(d)
        files = sorted(os.listdir(d))
        on_disk = load_file(os.path.join(d, "model.safetensors"))
        loaded = cls.from_pretrained(d)
        loaded.eval()
        with torch.no_grad():
            before = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)).logits
            after = loaded(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)).logits
        params = dict(model.named_parameters())
        return {
            "files": files,
            "disk_equals_model": all(np.array_equal(v, arr(params[k])) for k, v in on_disk.items() if k in params),
            "disk_names": sorted(on_disk),
            "loaded_dtype": str(next(loaded.parameters()).dtype),
            "loaded_logits_equal": bool(torch.equal(before, after)),
            "loaded_equals_disk": all(np.array_equal(on_disk[k], arr(p)) for k, p in loaded.named_parameters()),
        }


def run_model(torch, transformers, name, seed):
    cls, cfg = configs(transformers)[name]
    model = cls(cfg)
    result = {"initial": numpy_weights(model, seed)}
    causal = name != "bert"
    ids, mask = batch(seed + 1, pad_left=causal)
    if causal:
        labels = np.where(mask == 1, ids, -100)
    else:  # masked LM: predict 3 positions, the rest ignored
        labels = np.full_like(ids, -100)
        labels[:, [1, 3, 4]] = ids[:, [1, 3, 4]]
        ids = ids.copy()
        ids[:, [1, 3, 4]] = 3  # a stand-in [MASK] id
    model.eval()
    with torch.no_grad():
        eval_logits = arr(model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)).logits)
    result.update(eval_logits=eval_logits, mask=mask)
    if causal:
        result.update(generation(torch, model, ids, mask))
    result.update(train_step(torch, model, ids, labels, mask))
    result["round_trip"] = round_trip(torch, cls, model, ids, mask)
    return result


def main(out_path, as_mindtorch):
    if as_mindtorch:
        from mindtorch_v2._torch_alias import install_as_torch
        install_as_torch()
    import torch
    import transformers
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    torch.set_default_dtype(torch.float32)
    results = {"torch": torch.__name__, "transformers": transformers.__version__}
    for seed, name in enumerate(["gpt2", "bert", "llama"]):
        results[name] = run_model(torch, transformers, name, 100 * seed + 7)
    with open(out_path, "wb") as f:
        pickle.dump(results, f)


if __name__ == "__main__":
    main(sys.argv[1], len(sys.argv) > 2 and sys.argv[2] == "mindtorch")
