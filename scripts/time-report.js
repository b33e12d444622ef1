#!/usr/bin/env node
// Times one run's report re-rendered from a stored run, in this process (compiled build: node scripts/build.js first):
//   node scripts/time-report.js STORE_FILE RUN_ID [OUT_DIR] [REPEATS]
// Prints wall ms, process CPU ms, and the peak RSS (VmHWM) and the heap used after; with --trace-gc the heap peak shows in the GC lines.
const path = require('node:path');
const os = require('node:os');
const fs = require('node:fs');
const [file, runId, outArg, repeatsArg] = process.argv.slice(2);
if (!file || !runId) {
  console.error('usage: node scripts/time-report.js STORE_FILE RUN_ID [OUT_DIR] [REPEATS]');
  process.exit(2);
}
const dist = path.join(__dirname, '..', 'dist');
const { openNew } = require(path.join(dist, 'stores'));
const { renderReport } = require(path.join(dist, 'services', 'runReport'));
const hwm = () => Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
(async () => {
  const out = outArg || fs.mkdtempSync(path.join(os.tmpdir(), 'jf-time-report-'));
  const store = openNew({ kind: 'sqlite', file });
  const repeats = Number(repeatsArg || 1);
  for (let i = 0; i < repeats; i++) {
    const cpu = process.cpuUsage();
    const t = process.hrtime.bigint();
    await renderReport({ store, env: process.env }, runId, out);
    const wall = Number(process.hrtime.bigint() - t) / 1e6;
    const c = process.cpuUsage(cpu);
    console.log(
      `report ${i + 1}: wall ${wall.toFixed(0)} ms, CPU ${((c.user + c.system) / 1000).toFixed(0)} ms, peak RSS ${hwm().toFixed(0)} MB, heap used after ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MB`,
    );
  }
  await store.close();
  console.log(`written to ${out}`);
})();
