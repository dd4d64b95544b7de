#!/usr/bin/env python3
"""CPython's C unpickler on the same snapshot as pickle_bench, for the ratio.

Usage: python3 bench/pickle/time_python_pickle.py [FILE] [RUNS]
FILE defaults to pickle_bench's: torch_snapshots/gen5_medium_512_training.pickle
under $HBMSIM_BENCH_DATA (scripts/bench-real-data.sh sets it for the C++ side).
Prints the best and median wall (perf_counter) and CPU (process_time) times
of pickle.loads over RUNS runs; compare with pickle_bench's BM_Unpickle.
"""
import os
import pickle
import statistics
import sys
import time

SNAPSHOT = os.path.join("torch_snapshots", "gen5_medium_512_training.pickle")


def default_path():
    root = os.environ.get("HBMSIM_BENCH_DATA")
    if not root:
        sys.exit("time_python_pickle.py: give FILE, or set HBMSIM_BENCH_DATA to the folder of real recordings")
    return os.path.join(root, SNAPSHOT)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else default_path()
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    data = open(path, "rb").read()
    wall, cpu = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        pickle.loads(data)
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    mb = len(data) / 1e6
    print(f"{os.path.basename(path)}: {len(data)} bytes, {runs} runs")
    print(f"wall: best {min(wall) * 1e3:.2f} ms, median {statistics.median(wall) * 1e3:.2f} ms")
    print(f"cpu:  best {min(cpu) * 1e3:.2f} ms, median {statistics.median(cpu) * 1e3:.2f} ms "
          f"({mb / min(cpu):.0f} MB/s)")


if __name__ == "__main__":
    main()
