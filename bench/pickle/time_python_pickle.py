#!/usr/bin/env python3
"""CPython's C unpickler on the same snapshot as pickle_bench, for the ratio.

Usage: python3 bench/pickle/time_python_pickle.py [FILE] [RUNS]
Prints the best and median wall (perf_counter) and CPU (process_time) times
of pickle.loads over RUNS runs; compare with pickle_bench's BM_Unpickle.
"""
import os
import pickle
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "..", "shared", "torch_snapshots", "gen5_medium_512_training.pickle")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
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
