#!/usr/bin/env python3
"""StableHLO interpreter conformance: runs `warpforge check --json` over every .mlir file of the
StableHLO spec's interpreter tests and compares the outcome with expected_failures.txt.

Fails (exit 1) when
  - a function that is not listed in expected_failures.txt does not pass,
  - a listed function now passes (remove it from the list, so the list stays honest),
  - the pass rate is below --min-pass-rate (default 95%).
Prints a per-file table and the totals. Registered with ctest as conformance.interpret.

expected_failures.txt: one line per function, `file.mlir:function_name  reason`, the file path
relative to the interpret directory; a name defined in several chunks of one file is written
name#2, name#3, ... from its second definition on. Blank lines and lines starting with '#' are
ignored.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_expected(path):
    expected = {}
    if not os.path.exists(path):
        return expected
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            key, _, reason = line.partition(" ")
            if ":" not in key:
                sys.exit(f"{path}:{n}: expected `file.mlir:function  reason`, got {line!r}")
            expected[key] = reason.strip()
    return expected


def run_file(warpforge, root, rel, timeout):
    path = os.path.join(root, rel)
    try:
        proc = subprocess.run([warpforge, "check", "--json", "--timeout", str(timeout), path],
                              capture_output=True, text=True, timeout=max(600, timeout * 20))
    except subprocess.TimeoutExpired:
        return rel, [{"file": path, "function": "", "status": "error", "message": "warpforge check timed out"}]
    try:
        results = json.loads(proc.stdout)
    except json.JSONDecodeError:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        results = [{"file": path, "function": "", "status": "error",
                    "message": f"warpforge exited {proc.returncode} without JSON: {tail[0]}"}]
    return rel, results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--warpforge", required=True, help="path to the warpforge binary")
    parser.add_argument("--interpret-dir", default=os.path.join(HERE, "..", "..", "..", "shared", "stablehlo", "interpret"))
    parser.add_argument("--expected", default=os.path.join(HERE, "expected_failures.txt"))
    parser.add_argument("--min-pass-rate", type=float, default=95.0)
    parser.add_argument("--timeout", type=float, default=60, help="seconds per function")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--write-expected", action="store_true",
                        help="rewrite the expected-failures list from this run (keeping existing reasons)")
    args = parser.parse_args()

    root = os.path.abspath(args.interpret_dir)
    if not os.path.isdir(root):
        sys.exit(f"interpret directory not found: {root}")
    files = sorted(os.path.relpath(os.path.join(d, f), root)
                   for d, _, names in os.walk(root) for f in names if f.endswith(".mlir"))

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = dict(pool.map(lambda rel: run_file(args.warpforge, root, rel, args.timeout), files))

    expected = parse_expected(args.expected)
    not_passing = {}
    total = passed = 0
    rows = []
    for rel in files:
        counts = {"pass": 0, "fail": 0, "error": 0, "unsupported": 0}
        seen = {}
        for r in outcomes[rel]:
            status = r.get("status", "error")
            counts[status] = counts.get(status, 0) + 1
            name = r.get("function") or "<line %d>" % r.get("line", 0)
            # Some files define the same function name in several chunks: number the repeats.
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                name += f"#{seen[name]}"
            if status != "pass":
                key = f"{rel}:{name}"
                not_passing[key] = f"{status}: {r.get('message', '')}"
        n = sum(counts.values())
        total += n
        passed += counts["pass"]
        rows.append((rel, n, counts["pass"], counts["fail"], counts["error"], counts["unsupported"]))

    width = max(len(r[0]) for r in rows) if rows else 10
    print(f"{'file':<{width}}  {'total':>5} {'pass':>5} {'fail':>5} {'error':>5} {'unsup':>5}")
    for rel, n, p, f, e, u in rows:
        mark = "" if p == n else "  *"
        print(f"{rel:<{width}}  {n:>5} {p:>5} {f:>5} {e:>5} {u:>5}{mark}")
    rate = 100.0 * passed / total if total else 0.0
    print(f"\n{passed}/{total} functions pass ({rate:.1f}%) in {len(files)} files")

    if args.write_expected:
        with open(args.expected) as f:
            header = [l for l in f.read().splitlines() if l.startswith("#")]
        with open(args.expected, "w") as f:
            f.write("\n".join(header) + "\n")
            for key in sorted(not_passing):
                reason = expected.get(key) or not_passing[key].replace("\n", " ")[:200]
                f.write(f"{key}  {reason}\n")
        print(f"wrote {len(not_passing)} entries to {args.expected}")

    unexpected = sorted(set(not_passing) - set(expected))
    fixed = sorted(set(expected) - set(not_passing))
    ok = True
    if unexpected:
        ok = False
        print(f"\n{len(unexpected)} unexpected non-passing functions (not in {os.path.basename(args.expected)}):")
        for key in unexpected:
            print(f"  {key}  {not_passing[key][:300]}")
    if fixed:
        ok = False
        print(f"\n{len(fixed)} functions listed as expected failures now pass; remove them from the list:")
        for key in fixed:
            print(f"  {key}")
    if rate < args.min_pass_rate:
        ok = False
        print(f"\npass rate {rate:.1f}% is below the required {args.min_pass_rate:.1f}%")
    print(f"{passed} passed, {total - passed} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
