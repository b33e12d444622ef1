#!/usr/bin/env node
// A stage's span against its bound under workflows/limits/itemGroupSize.ts's batchSize, filled (with the other places'
// work in flight, as EndpointLane asks it) and by the share rule (without it, as runs started before the patch
// `fill-batches` replay), in a model of one endpoint's places (compiled build: node scripts/build.js first):
//   node scripts/simulate-batch-sizes.js [CALL_MS] [START_MS] [BETWEEN_CALLS_MS] [JITTER] [SEEDS]
// The first call of each place goes alone (no call timed yet). Then each free place takes the next batch at once; a
// batch costs START_MS (a workflow task and an activity dispatch), then its calls, each CALL_MS ± JITTER (a fraction,
// seeded) with BETWEEN_CALLS_MS between two calls of one batch. The time per call the rule is given is the running
// average EndpointLane keeps (CallTimes). Prints span ÷ ⌈items ÷ places⌉ × CALL_MS, averaged over SEEDS seeds, and the
// starts (activities) per run.
const path = require('node:path');
const dist = process.env.JUDGEFLOW_DIST || path.join(__dirname, '..', 'dist');
const { batchSize, CallTimes } = require(path.join(dist, 'workflows', 'limits', 'itemGroupSize'));

const [callMs, startMs, betweenMs, jitter, seeds] = [400, 33, 4.8, 0.02, 20].map((d, i) =>
  Number(process.argv[2 + i] ?? d),
);

function span(items, places, filled, seed) {
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const call = () => callMs * (1 + 2 * jitter * (random() - 0.5));
  const times = new CallTimes();
  // Per place: when it is free, and its running start (when, how many items) as the lane sees it.
  const free = new Array(places).fill(0);
  const running = new Array(places).fill(null);
  let remaining = items;
  let starts = 0;
  for (let place = 0; place < places && remaining > 0; place++, remaining--, starts++) {
    free[place] = call();
    running[place] = { at: 0, items: 1 };
  }
  while (remaining > 0) {
    let place = 0;
    for (let k = 1; k < places; k++) if (free[k] < free[place]) place = k;
    const now = free[place];
    times.note('judge', now - running[place].at, running[place].items);
    const perCall = times.of('judge');
    let busyMs = 0;
    for (let k = 0; k < places; k++)
      if (k !== place && running[k]) busyMs += Math.max(0, running[k].at + running[k].items * perCall - now);
    const n = Math.min(
      remaining,
      batchSize({ remaining, allowed: places, callMs: perCall, ...(filled ? { busyMs } : {}) }),
    );
    remaining -= n;
    starts++;
    let took = startMs;
    for (let i = 0; i < n; i++) took += call() + (i > 0 ? betweenMs : 0);
    running[place] = { at: now, items: n };
    free[place] = now + took;
  }
  return { ratio: Math.max(...free) / (Math.ceil(items / places) * callMs), starts };
}

function averaged(items, places, filled) {
  let ratio = 0;
  let starts = 0;
  for (let seed = 1; seed <= seeds; seed++) {
    const r = span(items, places, filled, seed);
    ratio += r.ratio / seeds;
    starts += r.starts / seeds;
  }
  return `${ratio.toFixed(4)}× (${Math.round(starts)})`;
}

console.log(
  `calls ${callMs} ms ±${jitter * 100}%, ${startMs} ms a start, ${betweenMs} ms between the calls of one batch, ${seeds} seeds`,
);
console.log('| items | places | span ÷ bound, filled (starts) | span ÷ bound, share rule (starts) |');
console.log('| --- | --- | --- | --- |');
for (const items of [80, 240, 1200, 12000])
  for (const places of [4, 12, 32])
    console.log(`| ${items} | ${places} | ${averaged(items, places, true)} | ${averaged(items, places, false)} |`);
