# Table of one run_all.sh run (results.jsonl): per file the events the
# viewer lists and how many were clicked, hovers, viewer exceptions,
# _memory_viz.py errors, and the reserved/allocated figures the viewer shows.
# Figures (bytes): R/A at the last event of "Allocator State History",
# the Active Memory Timeline peak and the Active Cached Segment Timeline peak
# (process_alloc_data over every entry, not only the clicked ones).
# Each export is checked against
#   - torch exports: the original file's same figures in the same viewer;
#   - every export: hbmsim's own --json (end reserved = stats.pool_bytes, or
#     the limit when the policy reserves it whole; peak_pool_bytes; peak_live_bytes).
# usage: summarize.py results.jsonl [--markdown]   (--markdown: the table of
# docs/memory-viz-rules.md §6)
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1])]
markdown = '--markdown' in sys.argv[2:]
orig = {r['label']: r for r in rows if r['kind'] == 'original'}


def figures(r, device):
    v = (r.get('viewer') or {}).get('views', {})
    h = v.get(f'history/{device}')
    if h is None:
        return None
    return {'events': h['events'], 'clicks': h['clicks'], 'last': h['last'],
            'alloc_peak': v.get(f'Active Memory Timeline/{device}', {}).get('peak'),
            'seg_peak': v.get(f'Active Cached Segment Timeline/{device}', {}).get('peak')}


def hbmsim_figures(r):
    try:
        j = json.load(open(r['file'] + '.json'))
    except (OSError, ValueError):
        return None
    s = j['stats']
    end = s['pool_bytes'] if s.get('pool_bytes') is not None else s['bytes_limit']
    peak = s['peak_pool_bytes'] if s.get('peak_pool_bytes') is not None else s['bytes_limit']
    return {'end_reserved': end, 'peak_reserved': peak, 'peak_live': j['peak_live_bytes'],
            'failures': len(j.get('failures', []))}


def verdict(r, f, device):
    if r['kind'] == 'original' or f is None:
        return ''
    out = []
    if '/torch' in r['label'] and r['label'].split('/')[0] in orig:  # torch, torch-check-recorded
        o = figures(orig.get(r['label'].split('/')[0], {}), device)
        keys = ('last', 'alloc_peak', 'seg_peak')
        diff = [f'{k} {o[k]}' for k in keys if o and f[k] != o[k]]
        out.append('=original' if o and not diff else f"original has {', '.join(diff) or 'no figures'}")
    h = hbmsim_figures(r)
    if h:
        # peak_live_bytes counts what the trace asked for, failed allocs too;
        # the viewer draws only what was placed, so with failures only the
        # reserved figures are compared.
        ok = (f['last'] is None or f['last'][0] == h['end_reserved']) and f['seg_peak'] == h['peak_reserved'] \
            and (h['failures'] > 0 or f['alloc_peak'] == h['peak_live'])
        note = f" (reserved; {h['failures']} failed allocs)" if h['failures'] else ''
        out.append(f'=hbmsim{note}' if ok else f'hbmsim says {h}')
    return ' '.join(out)


tot = {'files': 0, 'viewer_exceptions': 0, 'clicks': 0, 'hovers': 0, 'py_errors': 0, 'replay_exit_2_3': 0}
if markdown:
    print('| file | policy | events clicked/listed | hovers | exceptions | _memory_viz.py errors '
          '| last event reserved / allocated | Active Memory peak | Cached Segment peak | same as |')
    print('|---|---|---|---|---|---|---|---|---|---|')
else:
    print(f"{'file':48} {'exc':>3} {'py':>2} {'events':>11} {'hover':>5}  "
          f"{'last R/A':>25} {'alloc peak':>11} {'seg peak':>11}  check")
for r in rows:
    rep = r.get('replay') or {}
    if rep.get('exit') not in (None, 0, 1):
        tot['replay_exit_2_3'] += 1
        print(f"{r['label']:48} replay exit {rep['exit']}: {rep['err']}")
        continue
    v = r.get('viewer') or {}
    py = r.get('py') or {}
    exc = v.get('total_errors', 'n/a')
    pyerr = len(py['errors']) if py else 'n/a'
    hovers = sum(x.get('hovers', 0) for x in v.get('views', {}).values())
    tot['files'] += 1
    tot['viewer_exceptions'] += exc if isinstance(exc, int) else 1
    tot['py_errors'] += pyerr if isinstance(pyerr, int) else 1
    tot['hovers'] += hovers
    for d in v.get('devices', [0]):
        f = figures(r, d)
        if f is None:
            continue
        tot['clicks'] += f['clicks']
        last = '-' if f['last'] is None else f"{f['last'][0]}/{f['last'][1]}"
        label = r['label'] if r['kind'] == 'export' else f"{r['label']} (original d{d})"
        if markdown:
            parts = r['label'].split('/')  # NAME/POLICY[/dDEVICE] or NAME
            name = ' '.join(parts[:1] + parts[2:]) if r['kind'] == 'export' else f"{r['label']} d{d}"
            policy = parts[1] if r['kind'] == 'export' else 'original'
            print(f"| {name} | {policy} | {f['clicks']}/{f['events']} | {hovers} | {exc} | {pyerr} | {last} "
                  f"| {f['alloc_peak']} | {f['seg_peak']} | {verdict(r, f, d).replace('=', '')} |")
            continue
        print(f"{label:48} {exc:>3} {pyerr:>2} {f['clicks']:>5}/{f['events']:<5} {hovers:>5}  "
              f"{last:>25} {f['alloc_peak']!s:>11} {f['seg_peak']!s:>11}  {verdict(r, f, d)}")
    if not markdown and (v.get('first_errors') or (py and py.get('errors'))):
        print(f"    errors: viewer {v.get('first_errors')} py {py.get('errors')}")
print(('\n' if markdown else '') + 'totals: ' + json.dumps(tot))
