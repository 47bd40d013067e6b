#!/usr/bin/env python3
"""Issue 29's Q8_0 figure: how often the CUDA backend's top-1 token on a Q8_0 GGUF agrees with
transformers' float32 reference, beside llama.cpp's CUDA build on the very same files, ids and
positions. Reads make_geometries.py's manifest; ours through `clausewright-cli score`, the
peer through tests/golden/llama_logits (built inside llama.cpp's build by run_on_device.sh).

    python3 tests/golden/q8_agreement.py --manifest DIR/manifest.json --cli CLI \
        --llama /tmp/peer/llama.cpp/build/bin/llama_logits [--formats q8_0,f32] [--out T.md]

Only decisive positions count: those where the reference's best logit leads the second by at
least --decisive (default 1e-2) of the prompt's largest |logit| — on random untrained models
many rows are near ties, which no quantized file can be expected to keep. Prints one markdown
row per config and format, then the totals and ours / llama.cpp; the bar is 0.90.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def run(cmd, timeout=300):
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout)
        return r.returncode, r.stdout[-600:]
    except (OSError, subprocess.TimeoutExpired) as e:
        return 1, str(e)


def llama_rows(path):
    with open(path, "rb") as f:
        n, vocab = np.frombuffer(f.read(8), dtype=np.int32)
        return np.frombuffer(f.read(), dtype=np.float32).reshape(int(n), int(vocab))


def one(job):
    args, config, fmt, prompt, work = job
    gguf = config["files"][fmt]
    name = f"{config['name']}.{fmt}.{prompt['length']}"
    ids = os.path.join(work, name + ".ids.json")
    with open(ids, "w") as f:
        json.dump(prompt["ids"], f)
    ref = np.load(prompt["logits"])
    pos = np.asarray(prompt["positions"])
    top2 = np.sort(ref, axis=1)[:, -2:]
    decisive = (top2[:, 1] - top2[:, 0]) >= args.decisive * prompt["max_abs_logit"]
    want = ref.argmax(axis=1)
    row = {"config": config["name"], "format": fmt, "tokens": prompt["length"],
           "decisive": int(decisive.sum())}
    ours = os.path.join(work, name + ".ours.npy")
    rc, text = run([args.cli, "score", "--model", gguf, "--ids-file", ids, "--logits-out", ours,
                    "--device", args.device, "--precision", args.precision])
    if rc == 0:
        got = np.load(ours)[pos].argmax(axis=1)
        row["ours"] = int((got == want)[decisive].sum())
    else:
        row["ours_error"] = text.strip().splitlines()[-1] if text.strip() else f"exit {rc}"
    peer = os.path.join(work, name + ".llama.bin")
    rc, text = run([args.llama, gguf, ids, peer] + (["--cpu"] if args.llama_cpu else []))
    if rc == 0:
        rows = llama_rows(peer)
        if rows.shape[1] < ref.shape[1]:
            row["llama_error"] = f"llama.cpp gives {rows.shape[1]} logits a row, the model {ref.shape[1]}"
        else:
            got = rows[pos, : ref.shape[1]].argmax(axis=1)
            row["llama"] = int((got == want)[decisive].sum())
    else:
        row["llama_error"] = text.strip().splitlines()[-1] if text.strip() else f"exit {rc}"
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--llama", required=True)
    ap.add_argument("--llama-cpu", action="store_true", help="the peer on its CPU backend")
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--precision", default="bf16", help="ours: the default users get")
    ap.add_argument("--formats", default="q8_0,f32")
    ap.add_argument("--max-tokens", type=int, default=1000)
    ap.add_argument("--decisive", type=float, default=1e-2)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    with open(args.manifest) as f:
        manifest = json.load(f)
    work = tempfile.mkdtemp(prefix="q8_agreement_")
    jobs = []
    for config in manifest["configs"]:
        for fmt in args.formats.split(","):
            if fmt not in config.get("files", {}):
                continue
            for prompt in config["prompts"]:
                if prompt["length"] <= args.max_tokens:
                    jobs.append((args, config, fmt, prompt, work))
    with ThreadPoolExecutor(max_workers=args.workers) as ex:
        rows = list(ex.map(one, jobs))
    lines = [f"ours: clausewright-cli score --device {args.device} --precision {args.precision}; "
             f"llama.cpp: llama_logits ({'CPU' if args.llama_cpu else 'CUDA, all layers'}); "
             f"decisive: top-1 ahead by >= {args.decisive:g} of the prompt's max |logit|", "",
             "| config | format | tokens | decisive | ours | llama.cpp | note |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    totals = {}
    for r in sorted(rows, key=lambda r: (r["format"], r["config"], r["tokens"])):
        note = "; ".join(r[k] for k in ("ours_error", "llama_error") if k in r)
        lines.append(f"| {r['config']} | {r['format']} | {r['tokens']} | {r['decisive']} | "
                     f"{r.get('ours', '-')} | {r.get('llama', '-')} | {note} |")
        if "ours" in r and "llama" in r:
            t = totals.setdefault(r["format"], [0, 0, 0])
            t[0] += r["decisive"]
            t[1] += r["ours"]
            t[2] += r["llama"]
    lines.append("")
    for fmt, (decisive, ours, llama) in sorted(totals.items()):
        ratio = ours / llama if llama else float("nan")
        lines.append(f"{fmt}: {decisive} decisive positions (rows both answered): ours {ours}, "
                     f"llama.cpp {llama}, ours / llama.cpp {ratio:.3f} (bar 0.90)")
    errors = sum(1 for r in rows if "ours_error" in r or "llama_error" in r)
    lines.append(f"{len(rows)} rows, {errors} with an error")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0 if totals else 1


if __name__ == "__main__":
    sys.exit(main())
