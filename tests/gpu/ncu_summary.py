#!/usr/bin/env python3
"""Sums an `ncu --csv --metrics gpu__time_duration.sum` log per kernel: what one recorded
forward step spent in each kernel family. Usage: ncu_summary.py LOG.csv [TOP]"""
import csv
import re
import sys
from collections import defaultdict


def short(name):
    name = re.sub(r"\(.*$", "", name)  # argument list
    name = re.sub(r"^void ", "", name)
    name = re.sub(r"cw::kernels::cuda::", "", name)
    return name[:90]


def main():
    path, top = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25
    lines = open(path, errors="replace").read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        print("no kernels recorded in", path)
        return
    total, count = defaultdict(float), defaultdict(int)
    for row in csv.DictReader(lines[start:]):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(row["Metric Value"].replace(",", ""))
        scale = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3}.get(row.get("Metric Unit"), 1e-3)
        key = short(row["Kernel Name"])
        total[key] += value * scale
        count[key] += 1
    all_us = sum(total.values())
    print(f"{sum(count.values())} kernels, {all_us:.1f} us of kernel time")
    for key, us in sorted(total.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{us:9.1f} us {100 * us / all_us:5.1f}% {count[key]:5d}x  {key}")


if __name__ == "__main__":
    main()
