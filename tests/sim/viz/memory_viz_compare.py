# Compares an export of a PyTorch snapshot replay with the recording, for
# one device: how many allocs and final live blocks carry frames in each,
# how many trace entries carry time_us, and whether the export's alloc
# addresses are the recorded ones.
# Usage: memory_viz_compare.py RECORDING EXPORT DEVICE
#        memory_viz_compare.py --devices RECORDING   (devices with trace entries)
# Prints: allocs_with_frames R E; blocks_with_frames R E; time_us R/n E/n;
#         addresses recorded|simulated
import sys
sys.path.insert(0, __import__("os").path.dirname(__file__))
from memory_viz_check import load  # noqa: E402


def frames_of(b):
    if "frames" in b:
        return b["frames"]
    if b.get("history"):
        return b["history"][0].get("frames", [])
    return []


def counts(snap, device):
    trace = snap["device_traces"][device] if device < len(snap.get("device_traces", [])) else []
    allocs = sum(1 for e in trace if e["action"] == "alloc" and e.get("frames"))
    blocks = sum(1 for s in snap["segments"] if s.get("device", 0) == device for b in s["blocks"]
                 if b["state"] != "inactive" and frames_of(b))
    times = f'{sum(1 for e in trace if "time_us" in e)}/{len(trace)}'
    addrs = [e["addr"] for e in trace if e["action"] == "alloc"]
    return allocs, blocks, times, addrs


def main():
    if sys.argv[1] == "--devices":  # the devices whose trace has entries
        snap = load(sys.argv[2])
        print(" ".join(str(d) for d, t in enumerate(snap.get("device_traces", [])) if t))
        return
    rec, exp, device = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3])
    ra, rb, rt, raddrs = counts(rec, device)
    ea, eb, et, eaddrs = counts(exp, device)
    print(f"allocs_with_frames {ra} {ea}; blocks_with_frames {rb} {eb}; time_us {rt} {et}; "
          f"addresses {'recorded' if raddrs == eaddrs else 'simulated'}")


if __name__ == "__main__":
    main()
