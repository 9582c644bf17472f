#!/usr/bin/env python3
"""Sums an Nsight Compute CSV log (--metrics gpu__time_duration.sum --csv) by kernel name.

Prints the device time per run of each kernel name (total over the log divided by --runs, the
number of model runs the log holds), its launches per run and its share, slowest first, then the
total. Kernel names are shortened to the function name without template arguments or parameters,
unless --full is given.
"""
import argparse
import csv
import re
import sys
from collections import defaultdict


def short_name(name: str) -> str:
    # "void cutlass::Kernel2<foo<...>>(Params)" -> "cutlass::Kernel2"
    name = re.sub(r"^void ", "", name)
    depth, out = 0, []
    for ch in name:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out).strip() or name


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("log")
    ap.add_argument("--runs", type=int, default=1, help="model runs in the log (times are divided by it)")
    ap.add_argument("--full", action="store_true", help="keep whole kernel names")
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()

    with open(args.log, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's own messages start with ==
    rows = list(csv.DictReader(lines))
    if not rows:
        print(f"{args.log}: no kernel rows", file=sys.stderr)
        return 1
    total_ns = defaultdict(float)
    launches = defaultdict(int)
    for row in rows:
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(row["Metric Value"].replace(",", ""))
        unit = row.get("Metric Unit", "nsecond")
        scale = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9}.get(unit, 1.0)
        name = row["Kernel Name"] if args.full else short_name(row["Kernel Name"])
        total_ns[name] += value * scale
        launches[name] += 1
    grand = sum(total_ns.values())
    print(f"{'us/run':>10} {'launches/run':>12} {'share':>6}  kernel")
    for name, ns in sorted(total_ns.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{ns / args.runs / 1e3:10.1f} {launches[name] / args.runs:12.1f} {100 * ns / grand:5.1f}%  {name}")
    print(f"{grand / args.runs / 1e3:10.1f} {sum(launches.values()) / args.runs:12.1f} 100.0%  total")
    return 0


if __name__ == "__main__":
    sys.exit(main())
