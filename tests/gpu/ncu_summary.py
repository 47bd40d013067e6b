#!/usr/bin/env python3
"""Sums an `ncu --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum` log per kernel:
what one recorded forward step spent in each kernel family, and the device-memory bandwidth it
reached there (the bytes metric is optional). Usage: ncu_summary.py LOG.csv [TOP]"""
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
    total, count, read = defaultdict(float), defaultdict(int), defaultdict(float)
    byte_scale = {"byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}
    time_scale = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3}
    for row in csv.DictReader(lines[start:]):
        name, unit = row.get("Metric Name"), row.get("Metric Unit")
        value = float(row["Metric Value"].replace(",", ""))
        key = short(row["Kernel Name"])
        if name == "gpu__time_duration.sum":
            total[key] += value * time_scale.get(unit, 1e-3)
            count[key] += 1
        elif name == "dram__bytes_read.sum":
            read[key] += value * byte_scale.get(unit, 1.0)
    all_us = sum(total.values())
    all_bytes = sum(read.values())
    print(f"{sum(count.values())} kernels, {all_us:.1f} us of kernel time, "
          f"{all_bytes / 1e6:.1f} MB read ({all_bytes / 1e3 / max(all_us, 1e-9):.0f} GB/s)")
    for key, us in sorted(total.items(), key=lambda kv: -kv[1])[:top]:
        rate = f"{read[key] / 1e3 / us:6.0f} GB/s" if key in read and us > 0 else ""
        print(f"{us:9.1f} us {100 * us / all_us:5.1f}% {count[key]:5d}x {rate}  {key}")


if __name__ == "__main__":
    main()
