#!/usr/bin/env python3
"""The quick probe behind issue 29's first figures, through the command users run: tiny random
models of the shapes that failed (vocab 1,920, hidden 96-128, head_dim 32-64, 8-12 experts,
top-2..4; or RANDOM_CONFIGS=N seeded random ones), transformers' float32 logits computed on the
CPU, then `clausewright-cli score --precision f32|bf16` (one process per prompt) on cpu and
cuda:0 for the HF folder and the GGUFs `convert` writes. Prints one markdown table.

    python3 tests/golden/score_probe.py build-dev/app/clausewright-cli OUTDIR
    RANDOM_CONFIGS=14 FORMATS=f32,q8_0,q4_k_m python3 tests/golden/score_probe.py CLI OUTDIR
    ONLY=q35_h128 LENGTHS=1 FORMATS=f32 python3 tests/golden/score_probe.py CLI OUTDIR

The wider check (56 configs, batched decode, prefix forks) is make_geometries.py with
tests/gpu/geometry's geometry_check."""
import json, math, os, subprocess, sys, time, concurrent.futures as cf
import numpy as np, torch
sys.path.insert(0, "tests/golden")
import make_golden as mg

CLI = sys.argv[1]
OUT = sys.argv[2]
TOK = "tests/data/golden/tokenizer"
V = 1920
LENGTHS = [1, 2, 63, 64, 65, 130, 647, 1000]
SHAPES = {
  "q3_h96": ("q3", dict(hidden=96, layers=2, heads=3, kv=1, head_dim=32, experts=8, topk=2, ffn=48, tied=False, norm_topk=True, theta=1e6)),
  "q3_h128": ("q3", dict(hidden=128, layers=3, heads=2, kv=2, head_dim=64, experts=12, topk=4, ffn=64, tied=True, norm_topk=False, theta=1e4)),
  "q35_h96": ("q35", dict(hidden=96, types="LLLF", heads=2, kv=1, head_dim=64, partial=0.25, lk=2, lv=4, lkd=32, lvd=32, experts=8, topk=2, ffn=48, shared=96, tied=False, theta=1e6)),
  "q35_h128": ("q35", dict(hidden=128, types="LFLF", heads=4, kv=2, head_dim=32, partial=0.5, lk=1, lv=2, lkd=64, lvd=32, experts=12, topk=3, ffn=64, shared=64, tied=True, theta=1e7)),
}

import random
def random_shapes(n, seed):
    r = random.Random(seed); out = {}
    for i in range(n):
        kind = "q3" if i % 2 == 0 else "q35"
        heads = r.choice([1, 2, 3, 4, 6, 8]); kv = r.choice([d for d in range(1, heads + 1) if heads % d == 0])
        hd = r.choice([16, 32, 64, 128, 256]); experts = r.choice([4, 6, 8, 12, 16, 32, 64])
        s = dict(hidden=r.choice([64, 96, 128, 160, 192, 256]), heads=heads, kv=kv, head_dim=hd,
                 experts=experts, topk=r.randint(1, min(10, experts)), ffn=r.choice([32, 48, 64, 96, 128]),
                 tied=r.random() < 0.4, norm_topk=r.random() < 0.5, theta=r.choice([1e4, 1e6, 1e7]),
                 vocab=r.choice([1920, 1000, 1921, 2053, 1024]))
        if kind == "q3":
            s["layers"] = r.randint(1, 3)
        else:
            t = "".join(r.choice("LF") for _ in range(r.randint(2, 5)))
            if "L" not in t: t = "L" + t
            if "F" not in t: t = t + "F"
            s.update(types=t, partial=r.choice([0.25, 0.5, 1.0]), lk=r.choice([1, 2, 4]), lkd=r.choice([16, 32, 64, 128]),
                     lvd=r.choice([16, 32, 64, 128]), shared=r.choice([32, 64, 96, 256]))
            s["lv"] = s["lk"] * r.choice([1, 2, 4])
            rot = int(hd * s["partial"])
            if rot % 2 or rot // 2 < 3: s["partial"] = 1.0
        out[f"r{i}_{kind}"] = (kind, s)
    return out
if os.environ.get("RANDOM_CONFIGS"):
    SHAPES = random_shapes(int(os.environ["RANDOM_CONFIGS"]), 29)
    LENGTHS = [1, 2, 9, 65, 647]
if os.environ.get("ONLY"):
    SHAPES = {k: v for k, v in SHAPES.items() if k in os.environ["ONLY"].split(",")}
if os.environ.get("LENGTHS"):
    LENGTHS = [int(x) for x in os.environ["LENGTHS"].split(",")]
FORMATS = os.environ.get("FORMATS", "f32,q8_0").split(",")

def build(name, kind, s, seed):
    global V
    V = s.get("vocab", 1920)
    mg.MODEL_VOCAB = V
    from transformers import Qwen3MoeForCausalLM, Qwen3_5MoeForCausalLM
    torch.manual_seed(seed)
    if kind == "q3":
        cfg = mg.make_qwen3_config(s); cls = Qwen3MoeForCausalLM
    else:
        cfg = mg.make_qwen35_text_config(s); cls = Qwen3_5MoeForCausalLM
    cfg.max_position_embeddings = 8192
    cfg.eos_token_id = 0; cfg.pad_token_id = 0
    model = cls(cfg).float().eval()
    mg.randomise(model, kind == "q35", seed)
    mg.set_eager(model)
    folder = os.path.join(OUT, name, "hf")
    model.save_pretrained(folder, safe_serialization=True)
    for fn in os.listdir(TOK):
        if fn != "reference.json":
            import shutil; shutil.copy(os.path.join(TOK, fn), os.path.join(folder, fn))
    rng = np.random.default_rng(seed)
    refs = {}
    for n in LENGTHS:
        ids = rng.integers(3, 600, size=n).tolist()
        logits = mg.full_logits(model, ids)
        d = os.path.join(OUT, name)
        json.dump(ids, open(f"{d}/ids_{n}.json", "w"))
        np.save(f"{d}/ref_{n}.npy", logits)
    return folder

def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return r.returncode, (r.stderr or r.stdout).strip().splitlines()[-1:] if r.returncode else ""

def main():
    t0 = time.time()
    jobs = []
    for i, (name, (kind, s)) in enumerate(SHAPES.items()):
        try:
            folder = build(name, kind, s, 100 + i)
        except Exception as e:
            print(f"{name}: build failed: {e!r}"); continue
        files = {"hf": folder}
        json.dump(s, open(os.path.join(OUT, name, "shape.json"), "w"))
        for q in FORMATS:
            g = os.path.join(OUT, name, f"{q}.gguf")
            rc, err = run([CLI, "convert", "--from", folder, "--to", g, "--quant", q])
            if rc: print(f"{name} convert {q}: {err}"); continue
            files[q] = g
        for fmt, path in files.items():
            for dev, prec in (("cpu", "f32"), ("cuda:0", "f32"), ("cuda:0", "bf16")):
                for n in LENGTHS:
                    jobs.append((name, fmt, dev, prec, n, path))
    print(f"models built in {time.time()-t0:.0f} s; {len(jobs)} runs", flush=True)
    def one(j):
        name, fmt, dev, prec, n, path = j
        out = os.path.join(OUT, name, f"{fmt}_{dev.replace(':','')}_{prec}_{n}.npy")
        cmd = [CLI, "score", "--model", path, "--ids-file", os.path.join(OUT, name, f"ids_{n}.json"),
               "--logits-out", out, "--device", dev, "--threads", "2", "--precision", prec]
        rc, err = run(cmd)
        if rc: return j, None, err
        a = np.load(out); b = np.load(os.path.join(OUT, name, f"ref_{n}.npy"))
        scale = float(np.abs(b).max()); e = float(np.abs(a - b).max()) / scale
        top = (a.argmax(1) == b.argmax(1))
        srt = np.sort(b, 1); margin = srt[:, -1] - srt[:, -2]
        decisive = margin > 0.01 * scale
        os.remove(out)
        return j, (e, int(top.sum()), len(top), int((top & decisive).sum()), int(decisive.sum())), ""
    rows = []
    with cf.ThreadPoolExecutor(6) as ex:
        for j, res, err in ex.map(one, jobs):
            rows.append((j, res, err))
    for name in SHAPES:
        p = os.path.join(OUT, name, "shape.json")
        if os.path.exists(p): print(name, open(p).read())
    print("| model | format | device | precision | tokens | max err / max logit | top-1 | decisive top-1 | ok |")
    print("|---|---|---|---|---:|---:|---:|---:|---|")
    for (name, fmt, dev, prec, n, _), res, err in rows:
        if res is None:
            print(f"| {name} | {fmt} | {dev} | {prec} | {n} | ERROR {err} | | | FAIL |"); continue
        e, t, tn, d, dn = res
        tol = 1e-3 if (prec == "f32" and fmt in ("hf", "f32")) else None
        ok = "" if tol is None else ("pass" if e < tol else "FAIL")
        print(f"| {name} | {fmt} | {dev} | {prec} | {n} | {e:.2e} | {t}/{tn} | {d}/{dn} | {ok} |")
    print(f"total {time.time()-t0:.0f} s")

main()
