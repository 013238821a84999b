#!/usr/bin/env python3
"""Deterministic JSONL stats stream for the benchmarks.

One JSON object per line, about 140 bytes, 7 numeric fields plus a stage tag
and an epoch-seconds timestamp with microseconds, like a load generator's
periodic stats:

  {"ts":1700000000.000123,"stage":"3","rps":1234.5678,"p50":12.345,...}

    gen_jsonl.py --lines 1000000 --out stats.jsonl [--seed 1] [--start TS]
    gen_jsonl.py --lines 1000000 --lp --out stats.lp    # the same points as line protocol

--lp writes exactly what perfship should produce for
`-f jsonl --measurement bench --tag stage --time-key ts --type count=integer`
(the reference input for a plain client).
"""
import argparse
import random
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1000000)
    ap.add_argument("--out", default="-")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=float, default=1700000000.0)
    ap.add_argument("--lp", action="store_true", help="write line protocol instead")
    ap.add_argument("--host", default=None, help="with --lp: add a host tag")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    out = sys.stdout if a.out == "-" else open(a.out, "w")
    w = out.write
    for i in range(a.lines):
        ts_us = int(a.start * 1e6) + i * 1000 + rnd.randrange(1000)
        stage = str(i * 12 // a.lines)
        rps = round(rnd.uniform(500, 2000), 4)
        p50 = round(rnd.uniform(1, 50), 3)
        p95 = round(p50 * rnd.uniform(1.5, 4), 3)
        p99 = round(p95 * rnd.uniform(1.1, 2), 3)
        err = round(rnd.uniform(0, 0.05), 6)
        cpu = round(rnd.uniform(0, 100), 2)
        count = rnd.randrange(0, 10_000_000)
        if a.lp:
            tags = f",host={a.host}" if a.host else ""
            # shortest round-trip floats, as Python's repr prints them
            w(f"bench{tags},stage={stage} count={count}i,cpu={cpu!r},err={err!r},p50={p50!r},"
              f"p95={p95!r},p99={p99!r},rps={rps!r} {ts_us * 1000}\n")
        else:
            w(f'{{"ts":{ts_us // 1000000}.{ts_us % 1000000:06d},"stage":"{stage}","rps":{rps!r},'
              f'"p50":{p50!r},"p95":{p95!r},"p99":{p99!r},"err":{err!r},"cpu":{cpu!r},"count":{count}}}\n')
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
