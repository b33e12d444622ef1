#!/usr/bin/env node
// Sums up a scripts/memory-probe.js log: node scripts/memory-probe-summary.js MEM_FILE [SECONDS]
// One line per SECONDS (5): the process's RSS and VmHWM, each isolate's used/committed heap (cN: N native contexts),
// and the rest (RSS minus every isolate's committed heap: file-mapped code, malloc, stacks, unlogged threads).
const fs = require('fs');
const f = process.argv[2];
const step = Number(process.argv[3] || 5) * 1000;
const L = fs.readFileSync(f, 'utf8').trim().split('\n').map(JSON.parse);
const t0 = L[0].t;
const by = new Map();
for (const l of L) {
  const b = Math.floor((l.t - t0) / step);
  if (!by.has(b)) by.set(b, {});
  const o = by.get(b);
  const k = l.kind + (l.kind === 'main' ? '' : l.tid);
  o[k] = l;
}
const kinds = [...new Set(L.map((l) => l.kind + (l.kind === 'main' ? '' : l.tid)))];
console.log('s', 'rss', 'hwm', kinds.map((k) => k + '(used/phys)').join(' '), 'rest');
for (const [b, o] of by) {
  if (!o.main) continue;
  let ph = 0;
  const cols = kinds.map((k) => {
    const x = o[k];
    if (!x) return '-';
    ph += x.phys;
    return x.used.toFixed(0) + '/' + x.phys.toFixed(0) + (x.ctx > 1 ? 'c' + x.ctx : '');
  });
  console.log(
    ((b * step) / 1000).toFixed(0),
    o.main.rss.toFixed(0),
    o.main.hwm.toFixed(0),
    cols.join(' '),
    (o.main.rss - ph).toFixed(0),
    'ab',
    o.main.ab.toFixed(0),
  );
}
