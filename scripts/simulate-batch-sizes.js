#!/usr/bin/env node
// A stage's span against its bound under workflows/limits/itemGroupSize.ts's batchSize, and under the rule before it
// (the share of the items left per place, at most five), in a model of one endpoint's places (compiled build: node
// scripts/build.js first):   node scripts/simulate-batch-sizes.js [CALL_MS] [ROUND_TRIP_MS] [BETWEEN_CALLS_MS]
// Each free place takes the next batch at once; a batch costs the round trip between activities, then its calls, each
// CALL_MS ±10% (seeded) plus the time between two calls of one activity. Prints span ÷ ⌈items ÷ places⌉ × CALL_MS.
const path = require('node:path');
const dist = process.env.JUDGEFLOW_DIST || path.join(__dirname, '..', 'dist');
const { batchSize } = require(path.join(dist, 'workflows', 'limits', 'itemGroupSize'));

const [callMs, roundTripMs, betweenMs] = [400, 50, 3].map((d, i) => Number(process.argv[2 + i] ?? d));
const before = ({ remaining, allowed }) => Math.max(1, Math.min(5, Math.floor(remaining / allowed)));

function span(items, places, size) {
  let seed = 1;
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const free = new Array(places).fill(0);
  let remaining = items;
  let batches = 0;
  while (remaining > 0) {
    let place = 0;
    for (let k = 1; k < places; k++) if (free[k] < free[place]) place = k;
    const n = Math.min(remaining, size({ remaining, allowed: places, callMs }));
    remaining -= n;
    batches++;
    let took = roundTripMs;
    for (let i = 0; i < n; i++) took += callMs * (1 + 0.2 * (random() - 0.5)) + betweenMs;
    free[place] += took;
  }
  return { ratio: Math.max(...free) / (Math.ceil(items / places) * callMs), batches };
}

console.log(`calls ${callMs} ms ±10%, ${roundTripMs} ms between batches, ${betweenMs} ms between calls of one batch`);
console.log('| items | places | span ÷ bound, batchSize (batches) | span ÷ bound, before (batches) |');
console.log('| --- | --- | --- | --- |');
for (const items of [80, 240, 1200, 12000])
  for (const places of [4, 12, 32]) {
    const now = span(items, places, batchSize);
    const old = span(items, places, before);
    console.log(
      `| ${items} | ${places} | ${now.ratio.toFixed(3)}× (${now.batches}) | ${old.ratio.toFixed(3)}× (${old.batches}) |`,
    );
  }
