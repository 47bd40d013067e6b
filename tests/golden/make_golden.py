#!/usr/bin/env python3
"""Builds the golden reference data for the engine's forward-pass tests.

Run on a machine with torch, transformers 5.x, tokenizers and safetensors (the accelerator
machine): it trains a small byte-level BPE tokenizer with Qwen's pre-tokenizer and special
tokens, builds tiny models with transformers' own classes (several shapes of qwen3_moe and
qwen3_5_moe) from random weights trained for a few hundred steps on the same text, saves them
as Hugging Face folders in bf16, and writes reference logits computed in float32 from the bf16
weights (upcast), greedy continuations and chat template renderings.

    python3 tests/golden/make_golden.py --out DIR

DIR/ then holds tokenizer/, models/<name>/ (HF folders) and ref/<name>/ (meta.json and
logits_*.npy, float32 [rows, vocab] at the positions listed in meta.json). Each model is
built inside its own try block so one failure does not lose the others; failures are listed
in DIR/summary.json.
"""

import argparse
import json
import math
import os
import shutil
import sys
import traceback

import numpy as np
import torch

VOCAB_TRAIN = 600  # BPE vocabulary (bytes + merges) before the special tokens
MODEL_VOCAB = 640  # padded model vocabulary, as Qwen pads its embedding matrix

QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
ADDED_TOKENS = ["<think>", "</think>"]

CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

EXTRA_TEXT = """
The Supplier shall deliver the Goods no later than 30 (thirty) days after the Effective Date.
Either party may terminate this Agreement upon 90 days' written notice; provided, however, that
Sections 4.2, 7 and 12.1(b) shall survive. Liability is capped at EUR 1,000,000.00 — except for
gross negligence. Café, naïve, Straße, Ελληνικά, 中文合同条款, 日本語の契約書, emoji 😀👍.
  Indented   text\twith\ttabs and\r\nWindows line endings.\n\n\nNumbers: 3.14159 2026-11-30 0x1F.
It's, we're, they'll, I'd, you've, I'm: contractions. def f(x): return x ** 2  # code
"""

TOKENIZER_TESTS = [
    "",
    "Hello world",
    " leading space and trailing  ",
    "The Licensee shall indemnify the Licensor.",
    "It's 2026; we'll pay $1,234.56 by 30/11.",
    "Café naïve Straße 中文 😀",
    "line one\nline two\r\n\n\tindented",
    "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    "<think>reasoning</think>answer",
    "    four spaces then text",
]


def log(*args):
    print(*args, flush=True)


def train_tokenizer(out_dir, repo_root):
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    try:
        from transformers import PreTrainedTokenizerFast
    except ImportError:  # transformers 5 renamed the fast tokenizer class
        from transformers import TokenizersBackend as PreTrainedTokenizerFast

    texts = []
    license_path = os.path.join(repo_root, "LICENSE")
    if os.path.exists(license_path):
        with open(license_path, encoding="utf-8") as f:
            texts.extend(p for p in f.read().split("\n\n") if p.strip())
    texts.extend(EXTRA_TEXT.split("\n"))
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN_PATTERN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_TRAIN,
        special_tokens=[],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    tok.add_special_tokens(SPECIAL_TOKENS)
    tok.add_tokens(ADDED_TOKENS)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>", "<|im_end|>"],
    )
    fast.chat_template = CHAT_TEMPLATE
    os.makedirs(out_dir, exist_ok=True)
    fast.save_pretrained(out_dir)
    ref = {"pattern": QWEN_PATTERN, "vocab_size": len(fast), "encodings": [], "chats": []}
    for text in TOKENIZER_TESTS:
        ids = fast.encode(text, add_special_tokens=False)
        ref["encodings"].append(
            {"text": text, "ids": ids, "decoded": fast.decode(ids, skip_special_tokens=False)}
        )
    chats = [
        [{"role": "user", "content": "What is the notice period?"}],
        [
            {"role": "system", "content": "You review contracts."},
            {"role": "user", "content": "Summarise clause 4."},
            {"role": "assistant", "content": "Clause 4 limits liability."},
            {"role": "user", "content": "And clause 5?"},
        ],
    ]
    for messages in chats:
        text = fast.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = fast.encode(text, add_special_tokens=False)
        ref["chats"].append({"messages": messages, "text": text, "ids": ids})
    with open(os.path.join(out_dir, "reference.json"), "w", encoding="utf-8") as f:
        json.dump(ref, f, ensure_ascii=False, indent=1)
    log("tokenizer: vocab", len(fast))
    return fast, texts


# ----------------------------------------------------------------------------------------
# Model shapes. Every input dimension of a matrix is a multiple of 32 so Q8_0 applies.

QWEN3_SHAPES = {
    "qwen3_moe_a": dict(hidden=64, layers=2, heads=4, kv=2, head_dim=16, experts=8, topk=2,
                        ffn=32, norm_topk=True, tied=False, theta=1e6),
    "qwen3_moe_b": dict(hidden=96, layers=3, heads=6, kv=1, head_dim=32, experts=16, topk=4,
                        ffn=32, norm_topk=False, tied=True, theta=1e4),
    "qwen3_moe_c": dict(hidden=128, layers=2, heads=8, kv=8, head_dim=16, experts=4, topk=1,
                        ffn=64, norm_topk=True, tied=False, theta=1e6),
}

QWEN35_SHAPES = {
    # three DeltaNet layers and one attention layer, as the real model's blocks of four
    "qwen3_5_moe_a": dict(hidden=64, types="LLLF", heads=4, kv=2, head_dim=32, partial=0.25,
                          lk=2, lv=4, lkd=16, lvd=16, experts=8, topk=2, ffn=32, shared=64,
                          tied=False, theta=1e7),
    "qwen3_5_moe_b": dict(hidden=96, types="FLF", heads=2, kv=1, head_dim=64, partial=0.25,
                          lk=2, lv=2, lkd=32, lvd=32, experts=16, topk=4, ffn=32, shared=32,
                          tied=True, theta=1e4),
    "qwen3_5_moe_c": dict(hidden=64, types="LFLLF", heads=4, kv=4, head_dim=16, partial=0.5,
                          lk=1, lv=4, lkd=16, lvd=32, experts=4, topk=1, ffn=64, shared=32,
                          tied=False, theta=1e6),
}


def make_qwen3_config(s):
    from transformers import Qwen3MoeConfig

    return Qwen3MoeConfig(
        vocab_size=MODEL_VOCAB,
        hidden_size=s["hidden"],
        intermediate_size=64,
        num_hidden_layers=s["layers"],
        num_attention_heads=s["heads"],
        num_key_value_heads=s["kv"],
        head_dim=s["head_dim"],
        max_position_embeddings=4096,
        rms_norm_eps=1e-6,
        tie_word_embeddings=s["tied"],
        rope_parameters={"rope_type": "default", "rope_theta": s["theta"]},
        decoder_sparse_step=1,
        mlp_only_layers=[],
        moe_intermediate_size=s["ffn"],
        num_experts=s["experts"],
        num_experts_per_tok=s["topk"],
        norm_topk_prob=s["norm_topk"],
        bos_token_id=None,
        eos_token_id=MODEL_EOS,
        pad_token_id=MODEL_PAD,
    )


def make_qwen35_text_config(s):
    from transformers import Qwen3_5MoeTextConfig

    rot = int(s["head_dim"] * s["partial"])
    half = rot // 2
    section = [half - 2 * (half // 3), half // 3, half // 3]
    types = ["linear_attention" if c == "L" else "full_attention" for c in s["types"]]
    return Qwen3_5MoeTextConfig(
        vocab_size=MODEL_VOCAB,
        hidden_size=s["hidden"],
        num_hidden_layers=len(types),
        num_attention_heads=s["heads"],
        num_key_value_heads=s["kv"],
        head_dim=s["head_dim"],
        max_position_embeddings=4096,
        rms_norm_eps=1e-6,
        tie_word_embeddings=s["tied"],
        rope_parameters={
            "rope_type": "default",
            "rope_theta": s["theta"],
            "partial_rotary_factor": s["partial"],
            "mrope_section": section,
            "mrope_interleaved": True,
        },
        partial_rotary_factor=s["partial"],
        linear_conv_kernel_dim=4,
        linear_key_head_dim=s["lkd"],
        linear_value_head_dim=s["lvd"],
        linear_num_key_heads=s["lk"],
        linear_num_value_heads=s["lv"],
        moe_intermediate_size=s["ffn"],
        shared_expert_intermediate_size=s["shared"],
        num_experts=s["experts"],
        num_experts_per_tok=s["topk"],
        layer_types=types,
        bos_token_id=None,
        eos_token_id=MODEL_EOS,
        pad_token_id=MODEL_PAD,
    )


MODEL_EOS = 0
MODEL_PAD = 0


def randomise(model, zero_centred, seed, router_spread=2.5):
    """Weights with enough spread that logits and routing are decisive, rounded to bf16.
    router_spread: the router's standard deviation times its fan-in's square root (untrained
    models want more than trained ones, whose routing the training makes decisive)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            shape = tuple(p.shape)
            n = torch.randn(shape, generator=g)
            if name.endswith("A_log"):
                v = torch.empty(shape).uniform_(0.05, 3.0, generator=g).log()
            elif name.endswith("dt_bias"):
                v = 0.5 * n
            elif "conv1d" in name:
                v = 0.5 * n
            elif p.ndim == 1:  # norm weights
                plain = (not zero_centred) or ("linear_attn.norm" in name)
                v = (1.0 + 0.1 * n) if plain else 0.1 * n
            elif "embed_tokens" in name:
                v = n
            elif name.startswith("lm_head"):
                v = n * (3.0 / math.sqrt(shape[-1]))
            elif name.endswith("mlp.gate.weight") or name.endswith("router.weight"):
                v = n * (router_spread / math.sqrt(shape[-1]))
            else:
                v = n / math.sqrt(shape[-1])
            p.copy_(v.to(torch.bfloat16).to(p.dtype))
    if getattr(model.config, "tie_word_embeddings", False):
        model.tie_weights()


TRAIN_STEPS = 800
TRAIN_WINDOW = 128
TRAIN_BATCH = 8


def round_to_bf16(model):
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(torch.bfloat16).to(p.dtype))


def train_briefly(model, train_ids, seed):
    """A few hundred Adam steps on the corpus. Untrained random models predict almost
    uniformly, so the top token is decided by margins smaller than any quantization error and
    a Q8_0 agreement check measures noise; trained models, like real ones, have peaked
    next-token distributions. Returns the first and last training loss."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device).train()
    g = torch.Generator().manual_seed(seed)
    data = torch.tensor(train_ids, dtype=torch.long)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(TRAIN_STEPS):
        starts = torch.randint(0, len(data) - TRAIN_WINDOW, (TRAIN_BATCH,), generator=g)
        batch = torch.stack([data[s : s + TRAIN_WINDOW] for s in starts.tolist()]).to(device)
        loss = model(input_ids=batch, labels=batch, use_cache=False).loss
        if not torch.isfinite(loss):
            raise RuntimeError(f"training diverged at step {len(losses)}")
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss))
    model.to("cpu").float().eval()
    round_to_bf16(model)
    if getattr(model.config, "tie_word_embeddings", False):
        model.tie_weights()
    return losses[0], losses[-1]


def margin_stats(model, prompts):
    """Top-1 margins at every position of every prompt: how decisive the reference is."""
    margins = []
    for ids in prompts:
        logits = full_logits(model, ids)
        top2 = np.sort(logits, axis=-1)[:, -2:]
        margins.extend((top2[:, 1] - top2[:, 0]).tolist())
    m = np.array(margins)
    return {"positions": int(m.size), "median": float(np.median(m)),
            "below_0.05": int((m < 0.05).sum()), "below_0.5": int((m < 0.5).sum())}


def set_eager(model):
    try:
        model.set_attn_implementation("eager")
    except Exception:  # older API
        model.config._attn_implementation = "eager"


def full_logits(model, ids):
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids], dtype=torch.long), use_cache=False)
    return out.logits[0].float().numpy()


def stored_positions(n):
    if n <= 160:
        return list(range(n))
    pos = set(range(16)) | set(range(16, n - 32, 13)) | set(range(n - 32, n))
    return sorted(pos)


def build_training_ids(tokenizer, texts):
    """The corpus and a few chat exchanges in the model's template, one token stream."""
    corpus = tokenizer.encode("\n\n".join(texts), add_special_tokens=False)
    exchanges = [
        ("Which law governs this licence?", "The licence does not name a governing law."),
        ("What is the notice period?", "Ninety days' written notice."),
        ("Summarise clause 4.", "Clause 4 grants a copyright licence."),
    ]
    chat_ids = []
    for question, answer in exchanges * 8:
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": question}, {"role": "assistant", "content": answer}],
            tokenize=False)
        chat_ids.extend(tokenizer.encode(text, add_special_tokens=False))
    return corpus + chat_ids


def build_prompts(tokenizer, texts):
    corpus = "\n\n".join(texts)
    ids = tokenizer.encode(corpus, add_special_tokens=False)
    chat = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Which law governs this licence?"}],
        tokenize=False,
        add_generation_prompt=True,
    )
    chat_ids = tokenizer.encode(chat, add_special_tokens=False)
    assert len(ids) > 800, len(ids)
    return [
        ids[5:6],  # one token
        chat_ids,  # a chat prompt with special tokens
        ids[100:230],  # 130 tokens: crosses the DeltaNet chunk of 64 twice
        ids[300:1000],  # 700 tokens
    ]


def greedy(model, prompt, steps):
    ids = list(prompt)
    out, margins = [], []
    for _ in range(steps):
        logits = full_logits(model, ids)[-1]
        order = np.argsort(-logits)
        out.append(int(order[0]))
        margins.append(float(logits[order[0]] - logits[order[1]]))
        ids.append(int(order[0]))
    return out, margins


def write_reference(name, model, prompts, folder, ref_dir, extra):
    os.makedirs(ref_dir, exist_ok=True)
    meta = {"name": name, "folder": folder, "prompts": [], "greedy": []}
    meta.update(extra)
    try:
        meta["rotary_dims"] = int(model.model.rotary_emb.inv_freq.numel() * 2)
    except Exception:
        meta["rotary_dims"] = None
    max_logit = 0.0
    for i, ids in enumerate(prompts):
        logits = full_logits(model, ids)
        pos = stored_positions(len(ids))
        rows = logits[pos].astype(np.float32)
        np.save(os.path.join(ref_dir, f"logits_{i}.npy"), rows)
        m = float(np.abs(logits).max())
        max_logit = max(max_logit, m)
        meta["prompts"].append(
            {"ids": [int(t) for t in ids], "positions": pos, "logits": f"logits_{i}.npy",
             "max_abs_logit": m}
        )
    meta["max_abs_logit"] = max_logit
    for i in (1, 2):
        ids, margins = greedy(model, prompts[i], 12)
        meta["greedy"].append({"prompt": i, "ids": ids, "margins": margins})
    with open(os.path.join(ref_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)


def save_bf16(model, folder, tokenizer_dir):
    import copy

    m16 = copy.deepcopy(model).to(torch.bfloat16)
    m16.save_pretrained(folder, safe_serialization=True)
    for fn in os.listdir(tokenizer_dir):
        if fn != "reference.json":
            shutil.copy(os.path.join(tokenizer_dir, fn), os.path.join(folder, fn))


def check_reload(cls, folder, model, ids):
    re = cls.from_pretrained(folder, dtype=torch.float32)
    set_eager(re)
    re.eval()
    a = full_logits(model, ids)
    b = full_logits(re, ids)
    return float(np.abs(a - b).max())


def list_keys(folder):
    from safetensors import safe_open

    keys = []
    for fn in sorted(os.listdir(folder)):
        if fn.endswith(".safetensors"):
            with safe_open(os.path.join(folder, fn), "pt") as f:
                for k in f.keys():
                    keys.append(f"{k} {list(f.get_slice(k).get_shape())}")
    return keys


def build_qwen3(name, s, seed, out, tok_dir, prompts, train_ids, summary):
    from transformers import Qwen3MoeForCausalLM

    cfg = make_qwen3_config(s)
    torch.manual_seed(seed)
    model = Qwen3MoeForCausalLM(cfg).float().eval()
    set_eager(model)
    randomise(model, zero_centred=False, seed=seed)
    summary["training"][name] = train_briefly(model, train_ids, seed)
    summary["margins"][name] = margin_stats(model, prompts)
    folder = os.path.join(out, "models", name)
    save_bf16(model, folder, tok_dir)
    diff = check_reload(Qwen3MoeForCausalLM, folder, model, prompts[2])
    write_reference(name, model, prompts, f"models/{name}", os.path.join(out, "ref", name),
                    {"architecture": "qwen3_moe", "shape": s, "reload_max_diff": diff})
    summary["keys"][name] = list_keys(folder)
    log(name, "ok, reload diff", diff)


def build_qwen35(name, s, seed, out, tok_dir, prompts, train_ids, summary):
    from transformers import Qwen3_5MoeForCausalLM

    cfg = make_qwen35_text_config(s)
    torch.manual_seed(seed)
    model = Qwen3_5MoeForCausalLM(cfg).float().eval()
    set_eager(model)
    randomise(model, zero_centred=True, seed=seed)
    summary["training"][name] = train_briefly(model, train_ids, seed)
    summary["margins"][name] = margin_stats(model, prompts)
    folder = os.path.join(out, "models", name)
    save_bf16(model, folder, tok_dir)
    diff = check_reload(Qwen3_5MoeForCausalLM, folder, model, prompts[2])
    write_reference(name, model, prompts, f"models/{name}", os.path.join(out, "ref", name),
                    {"architecture": "qwen3_5_moe", "shape": s, "reload_max_diff": diff})
    summary["keys"][name] = list_keys(folder)
    log(name, "ok, reload diff", diff)
    return model, cfg


def build_qwen35_published(name, text_model, text_cfg, out, tok_dir, prompts, summary):
    """The published-checkpoint shape: Qwen3_5MoeForConditionalGeneration with a tiny vision
    tower, the text model under model.language_model. Same weights as text_model, so the
    reference logits must equal it."""
    from transformers import Qwen3_5MoeConfig, Qwen3_5MoeForConditionalGeneration

    vision = dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, in_channels=3,
                  patch_size=4, spatial_merge_size=2, temporal_patch_size=2,
                  out_hidden_size=text_cfg.hidden_size, num_position_embeddings=16)
    cfg = Qwen3_5MoeConfig(text_config=text_cfg.to_dict(), vision_config=vision,
                           image_token_id=MODEL_VOCAB - 3, video_token_id=MODEL_VOCAB - 4,
                           vision_start_token_id=MODEL_VOCAB - 5,
                           vision_end_token_id=MODEL_VOCAB - 6,
                           tie_word_embeddings=text_cfg.tie_word_embeddings)
    model = Qwen3_5MoeForConditionalGeneration(cfg).float().eval()
    set_eager(model)
    randomise(model, zero_centred=True, seed=99)
    with torch.no_grad():
        model.model.language_model.load_state_dict(text_model.model.state_dict())
        model.lm_head.weight.copy_(text_model.lm_head.weight)
    a = full_logits(text_model, prompts[2])
    b = full_logits(model, prompts[2])
    diff = float(np.abs(a - b).max())
    folder = os.path.join(out, "models", name)
    save_bf16(model, folder, tok_dir)
    summary["keys"][name] = list_keys(folder)
    summary["published_vs_text_diff"] = diff
    log(name, "saved; logits differ from the text model by", diff)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--repo", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    args = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    out = args.out
    os.makedirs(out, exist_ok=True)
    summary = {"ok": [], "failed": {}, "keys": {}, "training": {}, "margins": {}}
    import transformers

    summary["versions"] = {"torch": torch.__version__, "transformers": transformers.__version__}
    tok_dir = os.path.join(out, "tokenizer")
    tokenizer, texts = train_tokenizer(tok_dir, args.repo)
    global MODEL_EOS, MODEL_PAD
    MODEL_EOS = tokenizer.convert_tokens_to_ids("<|im_end|>")
    MODEL_PAD = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    prompts = build_prompts(tokenizer, texts)
    train_ids = build_training_ids(tokenizer, texts)
    summary["prompt_lengths"] = [len(p) for p in prompts]

    for i, (name, s) in enumerate(QWEN3_SHAPES.items()):
        try:
            build_qwen3(name, s, 1000 + i, out, tok_dir, prompts, train_ids, summary)
            summary["ok"].append(name)
        except Exception:
            summary["failed"][name] = traceback.format_exc()
            log(name, "FAILED\n", summary["failed"][name])
    first = None
    for i, (name, s) in enumerate(QWEN35_SHAPES.items()):
        try:
            model, cfg = build_qwen35(name, s, 2000 + i, out, tok_dir, prompts, train_ids, summary)
            summary["ok"].append(name)
            if first is None:
                first = (model, cfg)
        except Exception:
            summary["failed"][name] = traceback.format_exc()
            log(name, "FAILED\n", summary["failed"][name])
    if first is not None:
        name = "qwen3_5_moe_a_published"
        try:
            build_qwen35_published(name, first[0], first[1], out, tok_dir, prompts, summary)
            summary["ok"].append(name)
        except Exception:
            summary["failed"][name] = traceback.format_exc()
            log(name, "FAILED\n", summary["failed"][name])
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    log("done:", summary["ok"], "failed:", list(summary["failed"]))
    return 0 if not summary["failed"] else 1


if __name__ == "__main__":
    sys.exit(main())
