# Checks a memory_viz export the way pytorch.org/memory_viz needs it:
# blocks tile every segment, and every trace address lies in a known segment
# (a final one, or one a trace entry allocates, frees or maps). Prints counts.
import json
import pickle
import sys

path = sys.argv[1]
with open(path, "rb") as f:
    snap = json.load(f) if path.endswith(".json") else pickle.load(f)
segments = snap["segments"]
known = [(s["address"], s["address"] + s["total_size"]) for s in segments]
for s in segments:
    at = s["address"]
    for b in s["blocks"]:
        assert b["address"] == at, (s["address"], b)
        at += b["size"]
    assert at == s["address"] + s["total_size"], s
    assert s["segment_pool_id"] == (0, 0) or s["segment_pool_id"] == [0, 0]
trace = snap["device_traces"][0]
for e in trace:
    if e["action"].startswith("segment_"):
        known.append((e["addr"], e["addr"] + e["size"]))
actions = {}
for e in trace:
    actions[e["action"]] = actions.get(e["action"], 0) + 1
    if e["action"] == "oom":
        continue
    assert any(lo <= e["addr"] < hi for lo, hi in known), e
print(len(segments), sum(len(s["blocks"]) for s in segments),
      " ".join(f"{k}={actions[k]}" for k in sorted(actions)),
      snap["allocator_settings"]["hbmsim_allocator"])
