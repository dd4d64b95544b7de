#!/usr/bin/env python3
"""Writes a large PyTorch-format memory snapshot for peak-RSS measurements of
`hbmsim replay BIG.pickle --allocator torch` (notes: the shared snapshots are
at most 4 MB, too small to show how memory grows with the file).

It repeats the device trace of SOURCE until the output reaches --mb
megabytes, as fresh dicts (so pickle writes each entry out, as torch does)
whose keys and action strings are the same str objects (memoized, as in a
real dump) and whose frame lists stay shared; time_us keeps rising.

  python3 bench/pickle/make_big_snapshot.py SOURCE.pickle OUT.pickle --mb 550
"""
import argparse
import pickle


def main():
    p = argparse.ArgumentParser()
    p.add_argument("source")
    p.add_argument("out")
    p.add_argument("--mb", type=float, default=550)
    a = p.parse_args()
    with open(a.source, "rb") as f:
        snap = pickle.load(f)
    traces = snap["device_traces"]
    dev = max(range(len(traces)), key=lambda i: len(traces[i]))
    base = traces[dev]
    one = len(pickle.dumps(base, protocol=4))
    copies = max(1, int(a.mb * 1e6 / one))
    span = (base[-1].get("time_us", 0) - base[0].get("time_us", 0)) + 1 if base else 0
    out = []
    for c in range(copies):
        for e in base:
            d = dict(e)
            if "time_us" in d:
                d["time_us"] = e["time_us"] + c * span
            out.append(d)
    traces[dev] = out
    with open(a.out, "wb") as f:
        pickle.dump(snap, f, protocol=4)
    print(f"{a.out}: {copies} copies of {len(base)} entries")


if __name__ == "__main__":
    main()
