#!/usr/bin/env python3
"""Turns one device of a PyTorch memory snapshot into a text fixture for tests/torch.

Usage: extract_fixture.py SNAPSHOT.pickle DEVICE OUT.txt [empty]

`empty` writes no segments: for traces known to start from an empty allocator
(expandable-segment recordings, whose final mapped ranges cannot be told apart
from ranges the trace mapped, need it).

The snapshot files are plain data (dicts, lists, str, int, float, bool, tuples),
so pickle.load is safe on them; the C++ tests never read pickles.

Output, one record per line:
  segment <base> <size> <stream> <small 0|1> <expandable 0|1>   a segment held at trace start
  block <size> <requested> free|allocated                        its blocks, in address order
  <action> <addr> <size> <stream>                                the device trace, in order

The state at the start of the trace: every final segment not created by the
trace, plus segments the trace frees without creating; inside them, the blocks
that are live at the start (final active blocks the trace did not allocate, and
blocks the trace frees without allocating them, sized by 512-byte rounding of
their requested bytes); everything else in them is free.
"""
import pickle
import sys


def round512(n):
    return 512 if n < 512 else (n + 511) // 512 * 512


def main(path, device, out_path, from_empty):
    with open(path, 'rb') as f:
        snap = pickle.load(f)
    segments = [s for s in snap['segments'] if s['device'] == device]
    trace = snap['device_traces'][device]
    created = {e['addr'] for e in trace if e['action'] == 'segment_alloc'}
    live_in_trace, pre_live, freed_before, created_so_far = set(), {}, {}, set()
    for e in trace:
        if e['action'] == 'segment_alloc':
            created_so_far.add(e['addr'])
        elif e['action'] == 'segment_free' and e['addr'] not in created_so_far:
            freed_before[e['addr']] = (e['size'], e['stream'])
        elif e['action'] == 'alloc':
            live_in_trace.add(e['addr'])
        elif e['action'] == 'free_requested':
            if e['addr'] in live_in_trace:
                live_in_trace.discard(e['addr'])
            else:
                pre_live[e['addr']] = (round512(e['size']), e['size'])
    lines = ['# %s device %d, written by extract_fixture.py' % (path.split('/')[-1], device)]
    for s in segments:
        if from_empty:
            break
        base, size = s['address'], s['total_size']
        if base in created:
            continue
        live = [(b['address'], b['size'], b['requested_size']) for b in s['blocks']
                if b['state'].startswith('active') and b['address'] not in live_in_trace]
        live += [(a, sz, req) for a, (sz, req) in pre_live.items() if base <= a < base + size]
        lines.append('segment %d %d %d %d %d' % (base, size, s['stream'], s['segment_type'] == 'small',
                                                 s.get('is_expandable', False)))
        cursor = base
        for addr, sz, req in sorted(live):
            if addr > cursor:
                lines.append('block %d 0 free' % (addr - cursor))
            lines.append('block %d %d allocated' % (sz, req))
            cursor = addr + sz
        if cursor < base + size:
            lines.append('block %d 0 free' % (base + size - cursor))
    for addr, (size, stream) in sorted(freed_before.items()) if not from_empty else []:
        lines.append('segment %d %d %d %d 0' % (addr, size, stream, size == 2 << 20))
        lines.append('block %d 0 free' % size)
    for e in trace:
        lines.append('%s %d %d %d' % (e['action'], e.get('addr', e.get('device_free', 0)), e['size'], e['stream']))
    with open(out_path, 'w') as f:
        f.write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], len(sys.argv) > 4 and sys.argv[4] == 'empty')
