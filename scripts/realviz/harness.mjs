// Drives PyTorch's own MemoryViz.js (upstream text, only its CDN imports
// pointed at the npm d3@7 package) inside jsdom, as a user of
// pytorch.org/memory_viz would: load the file through the file input, open
// every view on every device, click every listed event of "Allocator State
// History" (evenly sampled above --max-clicks), hover/click blocks, segments
// and timeline polygons. Counts every exception (jsdom reports listener and
// animation-frame errors as "jsdomError"), and reports the viewer's figures.
//
// usage: node harness.mjs FILE [--max-clicks N] [--max-hovers N]
// prints one JSON line.
import fs from 'node:fs';
import path from 'node:path';
import {JSDOM, VirtualConsole} from 'jsdom';

const args = process.argv.slice(2);
const file = args[0];
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const MAX_CLICKS = opt('--max-clicks', 400);
const MAX_HOVERS = opt('--max-hovers', 300);

const errors = [];
const vc = new VirtualConsole();
vc.on('jsdomError', e => errors.push(String(e && (e.detail || e.message || e)).split('\n')[0]));
// STACK=1: print each error's stack to stderr (to find the viewer line).
if (process.env.STACK) {
  vc.on('jsdomError', e => process.stderr.write(`${e.stack}\n${e.detail && e.detail.stack}\n`));
}
const dom = new JSDOM('<!DOCTYPE html><html><head></head><body></body></html>', {
  pretendToBeVisual: true,
  virtualConsole: vc,
});
const w = dom.window;
if (process.env.STACK) w.addEventListener('error', ev => process.stderr.write(`${ev.error && ev.error.stack}\n`));
// Chromium has scrollIntoViewIfNeeded; jsdom does not (no layout either).
w.Element.prototype.scrollIntoViewIfNeeded = function () {};
for (const k of ['window', 'document', 'navigator', 'Element', 'HTMLElement', 'SVGElement', 'Node',
                 'Event', 'MouseEvent', 'CustomEvent', 'requestAnimationFrame', 'cancelAnimationFrame',
                 'getComputedStyle', 'FileReader', 'File', 'Blob']) {
  Object.defineProperty(globalThis, k, {value: k === 'window' ? w : w[k], configurable: true, writable: true});
}
// The viewer logs the loaded snapshot (then annotates that same object).
let snapshot = null;
const realLog = console.log;
console.log = (...a) => {
  if (a.length === 1 && a[0] && typeof a[0] === 'object' && 'device_traces' in a[0]) snapshot = a[0];
};

const mv = await import('./MemoryViz.js');
const pad = await import('./process_alloc_data.js');

const tick = () => new Promise(r => setTimeout(r, 0));
const frames = async () => { for (let i = 0; i < 3; ++i) await new Promise(r => w.requestAnimationFrame(() => r())); };
function fire(el, type) {
  try {
    el.dispatchEvent(new w.MouseEvent(type, {bubbles: true, view: w, clientX: 10, clientY: 10}));
  } catch (e) {
    errors.push(`${type}: ${e.message}`);
  }
}
function sample(n, k) {
  if (n <= k) return [...Array(n).keys()];
  const s = new Set([0, n - 1]);
  for (let i = 0; i < k; ++i) s.add(Math.floor((i * (n - 1)) / (k - 1)));
  return [...s].sort((a, b) => a - b);
}
function bytesOf(text) {
  const m = /\(.*?\((-?\d+) bytes\) allocated \/ .*?\((-?\d+) bytes\) reserved\)/.exec(text || '');
  return m ? [Number(m[2]), Number(m[1])] : null;
}

// Load through the file input, as a user picking the file does.
const buf = fs.readFileSync(file);
const [snapSel, viewSel, gpuSel] = w.document.querySelectorAll('body > div > select');
const input = w.document.querySelector('input[type=file]');
Object.defineProperty(input, 'files', {value: [new w.File([buf], path.basename(file))], configurable: true});
const e0 = errors.length;
fire(input, 'change');
for (let i = 0; i < 50 && snapshot === null; ++i) await tick();
await frames();
const out = {file: path.basename(file), load_errors: errors.length - e0, views: {}};
if (snapshot === null) {
  out.error = "not loaded: " + errors.join(" / ");
  realLog(JSON.stringify(out));
  process.exit(0);
}
const devices = [...gpuSel.options].map(o => Number(o.value));
out.devices = devices;

function visibleDiv() {
  return [...w.document.querySelectorAll('body > div')].find(d => /display: flex/.test(d.getAttribute('style') || ''));
}
async function open(view, device) {
  const before = errors.length;
  viewSel.value = view;
  gpuSel.value = String(device);
  fire(viewSel, 'change');
  await frames();
  return [visibleDiv(), errors.length - before];
}

for (const device of devices) {
  // Allocator State History: click the listed events, hover what is drawn.
  {
    const [div, openErr] = await open('Allocator State History', device);
    const before = errors.length;
    const pres = div ? [...div.querySelectorAll('div > pre')] : [];
    const stack = div ? div.querySelector('div > pre') : null;  // StackInfo's pre comes first
    const events = pres.filter(p => p !== stack);
    let clicks = 0, maxR = 0, maxA = 0, first = null, last = null, hovers = 0;
    for (const i of sample(events.length, MAX_CLICKS)) {
      fire(events[i], 'mousedown');
      ++clicks;
      const f = bytesOf(stack.textContent);
      if (f) {
        maxR = Math.max(maxR, f[0]);
        maxA = Math.max(maxA, f[1]);
        if (i === 0) first = f;
        if (i === events.length - 1) last = f;
      }
      if (i === 0 || i === events.length - 1) {
        const rects = [...div.querySelectorAll('svg rect')];
        for (const j of sample(rects.length, MAX_HOVERS)) {
          fire(rects[j], 'mouseover');
          fire(rects[j], 'mouseleave');
          ++hovers;
        }
      }
    }
    if (events.length === 0 && div) {  // no trace: the final state is drawn
      const rects = [...div.querySelectorAll('svg rect')];
      for (const j of sample(rects.length, MAX_HOVERS)) { fire(rects[j], 'mouseover'); ++hovers; }
    }
    out.views[`history/${device}`] = {open_errors: openErr, errors: errors.length - before, events: events.length,
                                      clicks, hovers, first, last, max_reserved: maxR, max_allocated: maxA};
  }
  for (const view of ['Active Memory Timeline', 'Allocated Memory (incl. Private Pools)',
                      'Active Cached Segment Timeline']) {
    const [div, openErr] = await open(view, device);
    const before = errors.length;
    // The plot's polygons; the minimap's one lies under the brush overlay,
    // which a real pointer hits instead.
    const plotSvg = div ? div.querySelector('svg') : null;
    const polys = plotSvg ? [...plotSvg.querySelectorAll('polygon')] : [];
    let hovers = 0;
    for (const j of sample(polys.length, MAX_HOVERS)) {
      fire(polys[j], 'mouseover');
      fire(polys[j], 'mousedown');
      fire(polys[j], 'mouseleave');
      ++hovers;
    }
    const segments = view === 'Active Cached Segment Timeline';
    let peak = null;
    try {
      const data = pad.process_alloc_data(snapshot, device, segments, 15000, view.startsWith('Allocated'));
      peak = data.max_at_time.length ? Math.max(...data.max_at_time) : 0;
    } catch (e) {
      peak = `error: ${e.message}`;
    }
    out.views[`${view}/${device}`] = {open_errors: openErr, errors: errors.length - before, polygons: polys.length,
                                      hovers, peak};
  }
}
{
  const [div, openErr] = await open('Allocator Settings', devices[0] ?? 0);
  out.views.settings = {open_errors: openErr, text: div ? div.textContent.length : 0};
}
out.total_errors = errors.length;
out.first_errors = [...new Set(errors)].slice(0, 5);
realLog(JSON.stringify(out));
process.exit(0);
