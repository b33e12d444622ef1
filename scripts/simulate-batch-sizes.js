#!/usr/bin/env node
// A stage's span against its bound under workflows/limits/itemGroupSize.ts's batchSize, in a model of one endpoint's
// places (compiled build: node scripts/build.js first), by three rules: filled and even (the place's part of the work
// left, taken up to a whole item from within a quarter and cut into equal batches, timed by the batches' calls: since
// the patch `even-batches`), filled (the part cut down to the largest batch, as runs started before that patch replay)
// and the share rule (as runs started before the patch `fill-batches` replay):
//   node scripts/simulate-batch-sizes.js [CALL_MS] [START_MS] [BETWEEN_CALLS_MS] [JITTER] [SEEDS] [FIRST_LATE_MS]
// The first call of each place goes alone (no call timed yet) and comes back FIRST_LATE_MS × (0.6–1.4) late (a fresh
// worker's warm-up). Then each free place takes the next batch at once; a batch costs START_MS (a workflow task and an
// activity dispatch), then its calls, each CALL_MS ± JITTER (a fraction, seeded) with BETWEEN_CALLS_MS between two
// calls of one batch. The time per call the rule is given is the one EndpointLane gives it (CallTimes). Prints span ÷
// ⌈items ÷ places⌉ × CALL_MS averaged over SEEDS seeds, the starts (activities) per run, and the spread of the places'
// last answers (ms).
const path = require('node:path');
const dist = process.env.JUDGEFLOW_DIST || path.join(__dirname, '..', 'dist');
const { batchSize, CallTimes } = require(path.join(dist, 'workflows', 'limits', 'itemGroupSize'));

const [callMs, startMs, betweenMs, jitter, seeds, firstLateMs] = [400, 33, 4.8, 0.02, 20, 0].map((d, i) =>
  Number(process.argv[2 + i] ?? d),
);

function span(items, places, rule, seed) {
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const call = () => callMs * (1 + 2 * jitter * (random() - 0.5));
  const times = new CallTimes();
  // Per place: when it is free, and its running start (when, how many items) as the lane sees it.
  const free = new Array(places).fill(0);
  const running = new Array(places).fill(null);
  let remaining = items;
  let starts = 0;
  for (let place = 0; place < places && remaining > 0; place++, remaining--, starts++) {
    free[place] = call() + firstLateMs * (0.6 + 0.8 * random());
    running[place] = { at: 0, items: 1 };
  }
  while (remaining > 0) {
    let place = 0;
    for (let k = 1; k < places; k++) if (free[k] < free[place]) place = k;
    const now = free[place];
    times.note('judge', now - running[place].at, running[place].items);
    const perCall = rule === 'even' ? times.ofBatches('judge') : times.of('judge');
    let busyMs = 0;
    for (let k = 0; k < places; k++)
      if (k !== place && running[k]) busyMs += Math.max(0, running[k].at + running[k].items * perCall - now);
    const n = Math.min(
      remaining,
      batchSize({
        remaining,
        allowed: places,
        callMs: perCall,
        ...(rule !== 'share' ? { busyMs, even: rule === 'even' } : {}),
      }),
    );
    remaining -= n;
    starts++;
    let took = startMs;
    for (let i = 0; i < n; i++) took += call() + (i > 0 ? betweenMs : 0);
    running[place] = { at: now, items: n };
    free[place] = now + took;
  }
  const used = free.filter((f) => f > 0);
  return {
    ratio: Math.max(...used) / (Math.ceil(items / places) * callMs),
    starts,
    spreadMs: Math.max(...used) - Math.min(...used),
  };
}

function averaged(items, places, rule) {
  let ratio = 0;
  let starts = 0;
  let spreadMs = 0;
  for (let seed = 1; seed <= seeds; seed++) {
    const r = span(items, places, rule, seed);
    ratio += r.ratio / seeds;
    starts += r.starts / seeds;
    spreadMs += r.spreadMs / seeds;
  }
  return `${ratio.toFixed(4)}× (${Math.round(starts)}, ${Math.round(spreadMs)} ms)`;
}

console.log(
  `calls ${callMs} ms ±${jitter * 100}%, ${startMs} ms a start, ${betweenMs} ms between the calls of one batch, first calls ${firstLateMs} ms late, ${seeds} seeds`,
);
console.log(
  '| items | places | span ÷ bound, filled and even (starts, spread) | filled (starts, spread) | share rule (starts, spread) |',
);
console.log('| --- | --- | --- | --- | --- |');
for (const items of [80, 240, 1200, 12000])
  for (const places of [4, 12, 32])
    console.log(
      `| ${items} | ${places} | ${['even', 'filled', 'share'].map((rule) => averaged(items, places, rule)).join(' | ')} |`,
    );
