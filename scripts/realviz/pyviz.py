# Runs every function of PyTorch's torch/cuda/_memory_viz.py (copied beside
# this file by setup.sh) on one snapshot, as `python -m torch.cuda._memory_viz
# stats|trace|segments|memory|compare|trace_plot|segment_plot` would; the
# flamegraph step is replaced by the identity (it only shells out to perl).
# Prints one JSON line: exceptions per function and segsum's totals.
import json, pickle, re, sys, os, contextlib, io
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _memory_viz as mv

path = sys.argv[1]
with open(path, 'rb') as f:
    data = pickle.load(f)
if isinstance(data, list):
    data = {'segments': data, 'traces': []}
ident = lambda s: s
calls = {
    'stats': lambda: mv.segsum(data),
    'trace': lambda: mv.trace(data),
    'segments': lambda: mv.segments(data, format_flamegraph=ident),
    'memory': lambda: mv.memory(data, format_flamegraph=ident),
    'compare': lambda: mv.compare(data['segments'], data['segments'], format_flamegraph=ident),
    'trace_plot': lambda: mv.trace_plot(data),
    'trace_plot_segments': lambda: mv.trace_plot(data, plot_segments=True),
    'segment_plot': lambda: mv.segment_plot(data),
}
out = {'file': os.path.basename(path), 'errors': {}}
for name, fn in calls.items():
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            r = fn()
        if name == 'stats':
            m = re.search(r'total_reserved: (\S+)\ntotal_allocated: (\S+)', r)
            out['stats'] = m.groups() if m else None
    except Exception as e:  # noqa: BLE001 - counting them is the point
        out['errors'][name] = f'{type(e).__name__}: {e}'[:200]
print(json.dumps(out))
