#!/usr/bin/env python3
"""Random model geometries for the whole-model CPU-vs-CUDA check (tests/gpu/geometry).

Run on the accelerator machine (torch and transformers 5.17 there): builds seeded random
configs of both architectures (qwen3_moe and qwen3_5_moe), each varying the config.json fields
the engine's loader reads (engine/model_files/hf_config.cpp) within what transformers accepts:
vocab_size (1,000, 1,920, 1,921, 3,001 ... and 151,936), hidden_size 64-256, head_dim 16-256,
attention and KV heads, num_experts 4-64, num_experts_per_tok 1-10, moe_intermediate_size,
norm_topk_prob (qwen3_moe), tie_word_embeddings, shared_expert_intermediate_size, DeltaNet key
and value head counts and dims, linear_conv_kernel_dim, layer_types, rope_theta,
partial_rotary_factor, rms_norm_eps, max_position_embeddings. Weights are random (rounded to
bf16, so the f32, f16 and bf16 GGUFs hold them exactly; a model is a few MB), saved as a
Hugging Face folder; transformers' float32 logits (eager attention, no TF32) of prompts of 1,
2, 63, 64, 65, 511, 647, 1,000, 2,049 and 4,097 random tokens (each config a subset, so the run
stays within minutes) are stored at chosen positions. With --cli, every folder is then
converted with `clausewright-cli convert` to the GGUF formats its config lists (f32 and two of
f16, bf16, q8_0, q6_k, q5_k_m, q4_k_m; every format for the first configs).

    python3 tests/golden/make_geometries.py --out DIR [--configs 56] [--cli PATH] [--workers 8]

DIR/manifest.json lists every config that was built (folder, GGUF files, prompts, the batched
decode and prefix-cache plans) and every failure with its traceback; the driver
(build/tests/gpu/geometry/geometry_check --manifest DIR/manifest.json) reads it.
"""

import argparse
import copy
import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

import numpy as np

PROMPT_LENGTHS = [1, 2, 63, 64, 65, 511, 647, 1000, 2049, 4097]
OTHER_FORMATS = ["f16", "bf16", "q8_0", "q6_k", "q5_k_m", "q4_k_m"]
# Vocabularies that are not multiples of 64 or 128 (and one that is, for contrast), and
# Qwen's own 151,936 (only with short prompts: its logits are 0.6 MB a row).
VOCABS = [1000, 1920, 1921, 3001, 1543, 2048, 2113]
BIG_VOCAB = 151936


def log(*args):
    print(*args, flush=True)


def pick(rng, values):
    return values[rng.randrange(len(values))]


def random_config(index, seed):
    """One geometry: the fields hf_config.cpp reads, drawn from seeded choices."""
    rng = random.Random(seed * 1000003 + index)
    arch = "qwen3_moe" if index % 2 == 0 else "qwen3_5_moe"
    big_vocab = index in (6, 13, 40)
    c = {
        "name": f"g{index:02d}_{arch}",
        "arch": arch,
        "seed": seed * 1000 + index,
        "vocab": BIG_VOCAB if big_vocab else pick(rng, VOCABS),
        "hidden": pick(rng, [64, 96, 128, 160, 192, 256]),
        "eps": pick(rng, [1e-6, 1e-5]),
        "tied": rng.random() < 0.4,
        "theta": pick(rng, [1e4, 5e5, 1e6, 1e7]),
        "experts": pick(rng, [4, 6, 8, 12, 16, 32, 64]),
        "ffn": pick(rng, [32, 64, 96, 128, 256]),
    }
    c["topk"] = rng.randint(1, min(10, c["experts"]))
    # Head dims 16..256; at most 1,024 query values per token (tiny models).
    hd = pick(rng, [16, 32, 48, 64, 128, 256])
    if index in (21, 34):
        hd = 40  # not a multiple of 16 (transformers takes any head_dim)
    kv = pick(rng, [1, 1, 2, 4])
    groups = pick(rng, [1, 2, 3, 4, 8])
    while kv * groups * hd > 1024 and groups > 1:
        groups //= 2
    while kv * groups * hd > 1024 and kv > 1:
        kv //= 2
    c.update(head_dim=hd, kv=kv, heads=kv * groups)
    if arch == "qwen3_moe":
        c["layers"] = rng.randint(1, 3)
        c["norm_topk"] = rng.random() < 0.6
        c["partial"] = 1.0
    else:
        # one config without any attention layer (DeltaNet only)
        c["types"] = "LL" if index == 17 else pick(
            rng, ["LF", "LLLF", "FL", "LFL", "F", "LLF", "FLLF", "LLFLF"])
        # partial rotary: the rotary dims (head_dim * factor) even, and 8 or more so that
        # mrope_section has three non-empty parts
        partials = [p for p in (0.25, 0.5, 1.0) if hd * p >= 8 and (hd * p) % 2 == 0]
        c["partial"] = pick(rng, partials)
        c["shared"] = pick(rng, [32, 64, 128, 256])
        lk = pick(rng, [1, 2, 4])
        c.update(
            lk=lk,
            lv=lk * pick(rng, [1, 2, 3]),
            lkd=pick(rng, [16, 32, 64, 128]),
            lvd=pick(rng, [16, 32, 64, 128]),
            conv=pick(rng, [4, 4, 4, 2, 3, 6]),
        )
    # Prompts: every config 1, 65 and 647 and one of the others; a quarter 2,049 and another
    # quarter 4,097 tokens. The 151,936-token vocabularies only the short ones.
    if big_vocab:
        lengths = [1, 2, 63, 64, 65]
    else:
        lengths = sorted({1, 65, 647, [2, 63, 64, 511, 1000][index % 5]}
                         | ({2049} if index // 2 % 4 == 1 else set())
                         | ({4097} if index // 2 % 4 == 3 else set()))
    c["prompts"] = lengths
    c["context"] = pick(rng, [4224, 8192, 40960]) if max(lengths) > 2049 else pick(rng, [2112, 4096, 8192])
    if index < 4:
        formats = list(OTHER_FORMATS)
    else:
        formats = [OTHER_FORMATS[index % 6], OTHER_FORMATS[(index + 3) % 6]]
    c["formats"] = ["hf", "f32"] + formats
    if arch == "qwen3_5_moe" and c["lkd"] != c["lvd"]:
        # A qwen35moe GGUF has one ssm.state_size for both head sizes: the folder only.
        c["formats"] = ["hf"]
    return c


def make_qwen3(c, eos, pad):
    from transformers import Qwen3MoeConfig

    return Qwen3MoeConfig(
        vocab_size=c["vocab"], hidden_size=c["hidden"], intermediate_size=64,
        num_hidden_layers=c["layers"], num_attention_heads=c["heads"],
        num_key_value_heads=c["kv"], head_dim=c["head_dim"],
        max_position_embeddings=c["context"], rms_norm_eps=c["eps"],
        tie_word_embeddings=c["tied"],
        rope_parameters={"rope_type": "default", "rope_theta": c["theta"]},
        decoder_sparse_step=1, mlp_only_layers=[], moe_intermediate_size=c["ffn"],
        num_experts=c["experts"], num_experts_per_tok=c["topk"], norm_topk_prob=c["norm_topk"],
        bos_token_id=None, eos_token_id=eos, pad_token_id=pad)


def make_qwen35(c, eos, pad):
    from transformers import Qwen3_5MoeTextConfig

    rot = int(c["head_dim"] * c["partial"])
    half = rot // 2
    section = [half - 2 * (half // 3), half // 3, half // 3]
    types = ["linear_attention" if t == "L" else "full_attention" for t in c["types"]]
    return Qwen3_5MoeTextConfig(
        vocab_size=c["vocab"], hidden_size=c["hidden"], num_hidden_layers=len(types),
        num_attention_heads=c["heads"], num_key_value_heads=c["kv"], head_dim=c["head_dim"],
        max_position_embeddings=c["context"], rms_norm_eps=c["eps"],
        tie_word_embeddings=c["tied"],
        rope_parameters={"rope_type": "default", "rope_theta": c["theta"],
                         "partial_rotary_factor": c["partial"], "mrope_section": section,
                         "mrope_interleaved": True},
        partial_rotary_factor=c["partial"], linear_conv_kernel_dim=c["conv"],
        linear_key_head_dim=c["lkd"], linear_value_head_dim=c["lvd"],
        linear_num_key_heads=c["lk"], linear_num_value_heads=c["lv"],
        moe_intermediate_size=c["ffn"], shared_expert_intermediate_size=c["shared"],
        num_experts=c["experts"], num_experts_per_tok=c["topk"], layer_types=types,
        bos_token_id=None, eos_token_id=eos, pad_token_id=pad)


def stored_positions(n, all_up_to):
    if n <= all_up_to:
        return list(range(n))
    pos = set(range(16)) | set(range(16, n - 32, 13)) | set(range(n - 32, n))
    # the prefill chunks' edges (256 on the CPU, 4,096 on a GPU) and the DeltaNet chunks' (64)
    for edge in (64, 256, 4096):
        for p in (edge - 1, edge, edge + 1):
            if p < n:
                pos.add(p)
    return sorted(pos)


def build(job):
    """Worker: one config's model, folder and reference logits. Returns its manifest entry."""
    c, out, tok_dir, eos, pad = job
    import torch

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import make_golden

    torch.set_num_threads(2)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    # The reference runs on the CPU: on the H200, torch's float32 logits computed on the GPU
    # (TF32 off) were 1e-3 to 8e-3 of max|logit| away from both of our backends at 647 tokens and
    # more, while our CPU and CUDA agreed with each other to 6e-7 and, against CPU-computed
    # references of the same shapes, to 2e-5 (tests/bench/results/2026-12-03-h200-geometry.md).
    device = "cpu"
    start = time.time()
    try:
        if c["arch"] == "qwen3_moe":
            from transformers import Qwen3MoeForCausalLM as cls

            cfg = make_qwen3(c, eos, pad)
        else:
            from transformers import Qwen3_5MoeForCausalLM as cls

            cfg = make_qwen35(c, eos, pad)
        torch.manual_seed(c["seed"])
        model = cls(cfg).float().eval()
        try:
            model.set_attn_implementation("eager")
        except Exception:  # older API
            model.config._attn_implementation = "eager"
        # Untrained: a wider router than the golden models' keeps the top-k choices decisive.
        make_golden.randomise(
            model, zero_centred=c["arch"] == "qwen3_5_moe", seed=c["seed"], router_spread=6.0)
        folder = os.path.join(out, "models", c["name"])
        # A bf16 copy is saved (the weights are bf16 values already); the float32 model keeps
        # its float32 buffers (the rotary inverse frequencies), as the engine computes them.
        copy.deepcopy(model).to(torch.bfloat16).save_pretrained(folder, safe_serialization=True)
        for fn in os.listdir(tok_dir):
            if fn != "reference.json":
                shutil.copy(os.path.join(tok_dir, fn), os.path.join(folder, fn))
        model.to(device)
        rng = np.random.default_rng(c["seed"])
        ref_dir = os.path.join(out, "ref", c["name"])
        os.makedirs(ref_dir, exist_ok=True)
        # One token stream; each prompt is its first n tokens (so the batched decode and the
        # prefix cache can read any prompt's rows).
        stream = rng.integers(0, c["vocab"], size=max(c["prompts"])).tolist()
        prompts = []
        # The batched decode and prefix plans read every row of one prompt (at most 647).
        batch_prompt = max(n for n in c["prompts"] if n <= 647)
        for n in c["prompts"]:
            ids = stream[:n]
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([ids], device=device), use_cache=False).logits
            logits = logits[0].float().cpu().numpy()
            pos = stored_positions(n, n if n == batch_prompt else 160)
            fn = f"logits_{n}.npy"
            np.save(os.path.join(ref_dir, fn), np.ascontiguousarray(logits[pos], dtype=np.float32))
            prompts.append({"length": n, "ids": ids, "positions": pos,
                            "logits": os.path.join(ref_dir, fn),
                            "max_abs_logit": float(np.abs(logits).max())})
        entry = dict(c)
        entry.update(folder=folder, prompts=prompts, seconds=round(time.time() - start, 2),
                     batch_prompt=batch_prompt)
        # Batched decode: sequences prefilled to these lengths, then 6 steps of one token each
        # together; prefix cache: the first `shared` tokens prefilled once, a fork continues.
        if batch_prompt >= 65:
            steps = 6
            lengths = sorted({1, 17, min(64, batch_prompt - steps), batch_prompt - steps})
            entry["batch"] = {"prompt": batch_prompt, "lengths": lengths, "steps": steps}
            entry["prefix"] = {"prompt": batch_prompt, "shared": 33 if c["seed"] % 2 else 64}
        return entry
    except Exception:
        return {"name": c["name"], "failed": traceback.format_exc()}


def convert(cli, folder, gguf, quant):
    try:
        r = subprocess.run([cli, "convert", "--from", folder, "--to", gguf, "--quant", quant],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return 1, f"{cli} convert --quant {quant}: {e}"
    return r.returncode, r.stdout[-2000:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--configs", type=int, default=56)
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--cli", default="", help="clausewright-cli, to convert the folders to GGUF")
    ap.add_argument("--repo", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    args = ap.parse_args()
    start = time.time()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import make_golden  # the tokenizer the golden models use (Qwen's pre-tokenizer)

    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    tok_dir = os.path.join(out, "tokenizer")
    tokenizer, _ = make_golden.train_tokenizer(tok_dir, args.repo)
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    pad = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    configs = [random_config(i, args.seed) for i in range(args.configs)]
    jobs = [(c, out, tok_dir, eos, pad) for c in configs]
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(args.workers) as pool:
        entries = pool.map(build, jobs)
    built = [e for e in entries if "failed" not in e]
    failed = {e["name"]: e["failed"] for e in entries if "failed" in e}
    for name, tb in failed.items():
        log(name, "FAILED\n", tb)
    log(f"built {len(built)} of {len(configs)} models in {time.time() - start:.0f} s")

    for e in built:
        e["files"] = {"hf": e["folder"]}
    if args.cli:
        tasks = []
        for e in built:
            for f in e["formats"]:
                if f != "hf":
                    tasks.append((e, f, os.path.join(out, "gguf", f"{e['name']}.{f}.gguf")))
        os.makedirs(os.path.join(out, "gguf"), exist_ok=True)
        t0 = time.time()
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 8) as ex:
            results = list(ex.map(lambda t: convert(args.cli, t[0]["folder"], t[2], t[1]), tasks))
        for (e, f, path), (rc, text) in zip(tasks, results):
            if rc == 0:
                e["files"][f] = path
            else:
                failed[f"{e['name']} convert {f}"] = text
                log(e["name"], "convert", f, "FAILED:", text)
        log(f"converted {len(tasks)} files in {time.time() - t0:.0f} s")
    with open(os.path.join(out, "manifest.json"), "w") as fp:
        json.dump({"configs": built, "failed": failed, "seconds": round(time.time() - start, 1)},
                  fp, indent=1)
    log(f"manifest: {len(built)} configs, {len(failed)} failures, {time.time() - start:.0f} s")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
