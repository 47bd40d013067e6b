#!/usr/bin/env python3
"""Writes qwen3_vocab.bin.xz: the Qwen3 vocabulary as raw token bytes, for the sampler tests.

Usage: make_vocab.py /work/shared/data/tokenizers/qwen3/tokenizer.json.xz

Format (little endian): magic "CWVOCAB1", uint32 count, then per id 0..count-1:
uint8 flags (bit 1: an added token; bit 0: marked special), uint16 length, the bytes (byte-level BPE decoded:
the GPT-2 byte-to-unicode map undone; added tokens as their UTF-8 text).
"""
import json, lzma, struct, sys


def byte_decoder():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def main():
    tok = json.loads(lzma.open(sys.argv[1]).read())
    dec = byte_decoder()
    vocab = tok["model"]["vocab"]
    entries = {}
    for text, i in vocab.items():
        entries[i] = (0, bytes(dec[ch] for ch in text))
    for added in tok["added_tokens"]:
        entries[added["id"]] = (2 | (1 if added["special"] else 0), added["content"].encode())
    count = max(entries) + 1
    out = bytearray(b"CWVOCAB1" + struct.pack("<I", count))
    for i in range(count):
        flags, data = entries.get(i, (2, b""))
        out += struct.pack("<BH", flags, len(data)) + data
    with lzma.open("qwen3_vocab.bin.xz", "wb", preset=9 | lzma.PRESET_EXTREME) as f:
        f.write(out)


main()
