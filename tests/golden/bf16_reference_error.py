#!/usr/bin/env python3
"""How far transformers itself lands from the golden float32 logits when it computes in bf16.

The GPU's bf16 precision rounds the operands of its products to bf16, so its logits cannot
match the float32 reference to the CPU's 1e-3. How far is fair depends on the model: a small
model with near-tied router choices amplifies rounding. This measures the same rounding done by
the reference implementation: each golden model loaded by transformers in bf16 (weights and
activations, float32 accumulation in the products, as torch does on a GPU), run on the golden
prompts, compared with the stored float32 logits at the stored positions.

    python3 tests/golden/bf16_reference_error.py [--golden tests/data/golden] [--json OUT]

Prints one line per model: the largest |error| over every prompt as a fraction of the
model's largest |logit| (the measure tests/engine/forward/golden_test.cpp uses).
"""

import argparse
import glob
import json
import os

import numpy as np
import torch
from transformers import AutoModelForCausalLM


def logits_of(model, ids, device):
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids], dtype=torch.long, device=device), use_cache=False)
    return out.logits[0].float().cpu().numpy()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--golden", default="tests/data/golden")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    results = {}
    for meta_path in sorted(glob.glob(os.path.join(args.golden, "ref", "*", "meta.json"))):
        with open(meta_path) as f:
            meta = json.load(f)
        ref_dir = os.path.dirname(meta_path)
        row = {}
        for dtype_name, dtype in (("f32", torch.float32), ("bf16", torch.bfloat16)):
            model = AutoModelForCausalLM.from_pretrained(
                os.path.join(args.golden, meta["folder"]), dtype=dtype).to(device).eval()
            try:
                model.set_attn_implementation("eager")
            except Exception:
                model.config._attn_implementation = "eager"
            worst = 0.0
            for prompt in meta["prompts"]:
                ref = np.load(os.path.join(ref_dir, prompt["logits"]))
                mine = logits_of(model, prompt["ids"], device)[prompt["positions"]]
                worst = max(worst, float(np.abs(mine - ref).max()))
            row[dtype_name] = worst / float(meta["max_abs_logit"])
            del model
        results[meta["name"]] = row
        print(f"{meta['name']}: transformers on {device}, largest |error| / largest |logit|: "
              f"f32 {row['f32']:.3g}, bf16 {row['bf16']:.3g}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
