# Walks a memory_viz snapshot (pickle or .json) backwards from its final
# `segments`, exactly as pytorch.org/memory_viz's "Allocator State History"
# does (docs/memory-viz-rules.md), and checks after EVERY undone entry that the
# viewer can draw the state: segments never overlap, every live block lies in
# exactly one segment, every undo finds what it needs. Also checks what the
# other views and torch/cuda/_memory_viz.py rely on (blocks tile segments,
# frames are {filename, line, name}, a `category` list holds `unknown`).
#
# Usage: memory_viz_check.py SNAPSHOT [--walk]
# Prints one line per device that has a trace or segments:
#   device D: S segments, B blocks, N entries (action=count ...), before R/A, start R/A, end R/A
# where R/A are the viewer's "reserved / allocated" figures: `start` at the
# first event (the viewer undoes entries 1..n-1), `end` after the last, and
# `before` with entry 0 undone too (the state before the trace: what the
# recording held when it began). --walk adds one line "  i R/A" per entry i,
# the figures the viewer prints when entry i is selected. Exit 1 with
# "FAIL: <path>: <why>" on the first violation.
import bisect
import json
import pickle
import sys


class Fail(Exception):
    pass


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        snap = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        snap = pickle.loads(data)
    if isinstance(snap, list):  # torch.cuda.memory_snapshot(): segments only
        snap = {"segments": snap, "device_traces": []}
    return snap


def check_frames(frames, where):
    if not isinstance(frames, list):
        raise Fail(f"{where}: frames is not a list")
    for f in frames:
        if not isinstance(f, dict) or not {"filename", "line", "name"} <= f.keys():
            raise Fail(f"{where}: a frame without filename/line/name: {f!r}")


def annotate(snap):
    """The viewer's annotate_snapshot: frames default, free pairs merged, categories."""
    categories = []
    traces = []
    for d, trace in enumerate(snap["device_traces"]):
        out = []
        for i, t in enumerate(trace):
            where = f"device_traces[{d}][{i}]"
            if "action" not in t:
                raise Fail(f"{where}: no action")
            if t["action"] != "oom" and t["action"] != "snapshot" and "addr" not in t:
                raise Fail(f"{where}: {t['action']} without addr")
            if "frames" in t:
                check_frames(t["frames"], where)
            t = dict(t)
            t["where"] = where
            if (t["action"] == "free_completed" and out and out[-1]["action"] == "free_requested"
                    and out[-1]["addr"] == t["addr"]):
                out[-1]["action"] = "free"
                continue
            if "category" in t and t["category"] not in categories:
                categories.append(t["category"])
            out.append(t)
        traces.append(out)
    # MemoryViz pushes `unknown` through a misspelt name (snapshot.categores):
    # categories without `unknown` make the whole file fail to load.
    if categories and "unknown" not in categories:
        raise Fail(f"categories {categories} lack 'unknown' (the viewer throws in annotate_snapshot)")
    return traces


class State:
    """Segments (sorted, disjoint) and live blocks of one device."""

    def __init__(self):
        self.seg_addr = []  # sorted starts
        self.seg = {}  # start -> [size, stream]
        self.blk_addr = []  # sorted starts of live blocks
        self.blk = {}  # addr -> [size, requested, pending]

    # -- segments --
    def segment_at(self, addr):
        i = bisect.bisect_right(self.seg_addr, addr) - 1
        if i >= 0:
            s = self.seg_addr[i]
            if addr < s + self.seg[s][0]:
                return s
        return None

    def add_segment(self, addr, size, stream, merge, where):
        if size <= 0:
            raise Fail(f"{where}: segment of size {size}")
        i = bisect.bisect_left(self.seg_addr, addr)
        if i > 0:
            p = self.seg_addr[i - 1]
            if p + self.seg[p][0] > addr:
                raise Fail(f"{where}: segment {addr:#x}+{size} overlaps segment {p:#x}+{self.seg[p][0]}")
        if i < len(self.seg_addr) and self.seg_addr[i] < addr + size:
            n = self.seg_addr[i]
            raise Fail(f"{where}: segment {addr:#x}+{size} overlaps segment {n:#x}+{self.seg[n][0]}")
        self.seg_addr.insert(i, addr)
        self.seg[addr] = [size, stream]
        if not merge:
            return
        # map_segment(merge=true): join a neighbour on the same stream that touches it.
        if i + 1 < len(self.seg_addr):
            n = self.seg_addr[i + 1]
            if addr + self.seg[addr][0] == n and self.seg[n][1] == stream:
                self.seg[addr][0] += self.seg.pop(n)[0]
                del self.seg_addr[i + 1]
        if i > 0:
            p = self.seg_addr[i - 1]
            if p + self.seg[p][0] == addr and self.seg[p][1] == stream:
                self.seg[p][0] += self.seg.pop(addr)[0]
                del self.seg_addr[i]

    def remove_range(self, addr, size, exact, where):
        """Undo segment_alloc (exact: the segment starting at addr) or segment_map."""
        if exact:
            if addr not in self.seg:
                raise Fail(f"{where}: segment_alloc at {addr:#x}: no segment starts there "
                           "(the viewer would drop the last segment instead)")
            if self.seg[addr][0] != size:
                raise Fail(f"{where}: segment_alloc {addr:#x}+{size}: the segment there is "
                           f"{self.seg[addr][0]} bytes")
            self.check_no_block(addr, size, where)
            del self.seg[addr]
            self.seg_addr.remove(addr)
            return
        s = self.segment_at(addr)
        if s is None or addr + size > s + self.seg[s][0]:
            raise Fail(f"{where}: segment_map {addr:#x}+{size} is not inside one segment "
                       "(the viewer throws reading undefined)")
        self.check_no_block(addr, size, where)
        ssize, stream = self.seg[s]
        end, send = addr + size, s + ssize
        if s == addr:
            del self.seg[s]
            self.seg_addr.remove(s)
            if end < send:
                bisect.insort(self.seg_addr, end)
                self.seg[end] = [send - end, stream]
        elif end == send:
            self.seg[s][0] = addr - s
        else:
            self.seg[s][0] = addr - s
            bisect.insort(self.seg_addr, end)
            self.seg[end] = [send - end, stream]

    # -- blocks --
    def check_no_block(self, addr, size, where):
        i = bisect.bisect_left(self.blk_addr, addr)
        for j in (i - 1, i):
            if 0 <= j < len(self.blk_addr):
                b = self.blk_addr[j]
                if b < addr + size and b + self.blk[b][0] > addr:
                    raise Fail(f"{where}: block {b:#x}+{self.blk[b][0]} is live in the range "
                               f"{addr:#x}+{size} that stops being a segment")

    def add_block(self, addr, size, requested, pending, where):
        s = self.segment_at(addr)
        if s is None or addr + size > s + self.seg[s][0]:
            raise Fail(f"{where}: block {addr:#x}+{size} is not inside one segment "
                       "(the viewer throws reading 'occupied' of null)")
        if addr in self.blk:
            raise Fail(f"{where}: block {addr:#x} is already live")
        self.check_no_block(addr, size, where)
        bisect.insort(self.blk_addr, addr)
        self.blk[addr] = [size, requested, pending]

    def remove_block(self, addr):
        if addr in self.blk:
            del self.blk[addr]
            self.blk_addr.remove(addr)

    def figures(self):
        return (sum(v[0] for v in self.seg.values()), sum(v[1] for v in self.blk.values()))


def final_state(snap, device):
    st = State()
    for k, seg in enumerate(snap["segments"]):
        if seg.get("device", 0) != device:
            continue
        where = f"segments[{k}]"
        if "frames" in seg:
            check_frames(seg["frames"], where)
        st.add_segment(seg["address"], seg["total_size"], seg.get("stream", 0), False, where)
        addr = seg["address"]
        for j, b in enumerate(seg["blocks"]):
            bw = f"{where}.blocks[{j}]"
            if "address" in b and b["address"] != addr:
                raise Fail(f"{bw}: address {b['address']:#x}, but the blocks before end at {addr:#x}")
            if "frames" in b:
                check_frames(b["frames"], bw)
            if b["state"] in ("active_allocated", "active_pending_free"):
                req = b.get("requested_size", b["size"])
                if req > b["size"]:
                    raise Fail(f"{bw}: requested_size {req} > size {b['size']}")
                st.add_block(addr, b["size"], req, b["state"] == "active_pending_free", bw)
            elif b["state"] != "inactive":
                raise Fail(f"{bw}: state {b['state']!r}")
            addr += b["size"]
        if addr != seg["address"] + seg["total_size"]:
            raise Fail(f"{where}: blocks cover {addr - seg['address']} of {seg['total_size']} bytes")
    return st


def undo(st, e):
    a, w = e["action"], e["where"]
    if a == "free":
        st.add_block(e["addr"], e["size"], e["size"], False, w)
    elif a == "free_completed":
        st.add_block(e["addr"], e["size"], e["size"], True, w)
    elif a == "free_requested":
        if e["addr"] not in st.blk:
            raise Fail(f"{w}: free_requested {e['addr']:#x} with no live block there "
                       "(the viewer throws setting free_requested of undefined)")
        st.blk[e["addr"]][2] = False
    elif a == "alloc":
        st.remove_block(e["addr"])
    elif a in ("segment_free", "segment_unmap"):
        st.add_segment(e["addr"], e["size"], e.get("stream", 0), a == "segment_unmap", w)
    elif a in ("segment_alloc", "segment_map"):
        st.remove_range(e["addr"], e["size"], a == "segment_alloc", w)


def fmt_figures(f):
    return f"{f[0]}/{f[1]}"


def check(path, walk=False):
    snap = load(path)
    traces = annotate(snap)
    devices = sorted({s.get("device", 0) for s in snap["segments"]} |
                     {d for d, t in enumerate(traces) if t})
    lines = []
    for d in devices:
        trace = traces[d] if d < len(traces) else []
        if any(s.get("device", 0) == d for s in snap["segments"]) and d >= len(traces) and traces:
            raise Fail(f"segments of device {d} but only {len(traces)} device_traces")
        st = final_state(snap, d)
        end = st.figures()
        nseg, nblk = len(st.seg), len(st.blk)
        steps = []  # (entry index, figures drawn there), newest first
        for i in range(len(trace) - 1, -1, -1):
            steps.append((i, st.figures()))
            undo(st, trace[i])
        start = steps[-1][1] if steps else end
        before = st.figures()
        counts = {}
        for e in snap["device_traces"][d] if d < len(snap["device_traces"]) else []:
            counts[e["action"]] = counts.get(e["action"], 0) + 1
        acts = " ".join(f"{k}={counts[k]}" for k in sorted(counts))
        lines.append(f"device {d}: {nseg} segments, {nblk} blocks, "
                     f"{len(snap['device_traces'][d]) if d < len(snap['device_traces']) else 0} entries"
                     f" ({acts}), before {fmt_figures(before)}, start {fmt_figures(start)}, "
                     f"end {fmt_figures(end)}")
        if walk:
            # Indices are those of the viewer's list (a free pair is one entry).
            lines.extend(f"  {i} {fmt_figures(f)}" for i, f in reversed(steps))
    return lines


def main():
    path = sys.argv[1]
    try:
        for line in check(path, "--walk" in sys.argv[2:]):
            print(line)
    except Fail as f:
        print(f"FAIL: {path}: {f}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
