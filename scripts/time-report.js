#!/usr/bin/env node
// Times one run's report re-rendered from a stored run, in this process (compiled build: node scripts/build.js first):
//   node scripts/time-report.js STORE_FILE RUN_ID [OUT_DIR] [REPEATS]
// JUDGEFLOW_TIME_REPORT_THREAD=1 renders it on the report thread as the worker does (worker/reportThread.ts: a new thread
// that loads the report's modules and opens its own store connection; the report goes to the run's own folder then).
// Prints wall ms, process CPU ms and the peak RSS (VmHWM); run with node --trace-gc for the heap before each collection
// (its largest is the heap's peak). JUDGEFLOW_DIST names another build (e.g. a copy of the old one, for before/after).
const path = require('node:path');
const os = require('node:os');
const fs = require('node:fs');
const [file, runId, outArg, repeatsArg] = process.argv.slice(2);
if (!file || !runId) {
  console.error('usage: node scripts/time-report.js STORE_FILE RUN_ID [OUT_DIR] [REPEATS]');
  process.exit(2);
}
const dist = process.env.JUDGEFLOW_DIST || path.join(__dirname, '..', 'dist');
const { openNew } = require(path.join(dist, 'stores'));
const { renderReport } = require(path.join(dist, 'services', 'runReport'));
const { renderReportInThread } = require(path.join(dist, 'worker', 'reportThread'));
const onThread = process.env.JUDGEFLOW_TIME_REPORT_THREAD === '1';
const hwm = () => Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
(async () => {
  const out = outArg || fs.mkdtempSync(path.join(os.tmpdir(), 'jf-time-report-'));
  const store = openNew({ kind: 'sqlite', file });
  const repeats = Number(repeatsArg || 1);
  for (let i = 0; i < repeats; i++) {
    const cpu = process.cpuUsage();
    const t = process.hrtime.bigint();
    if (onThread) await renderReportInThread({ kind: 'sqlite', file }, process.env, runId);
    else await renderReport({ store, env: process.env }, runId, out);
    const wall = Number(process.hrtime.bigint() - t) / 1e6;
    const c = process.cpuUsage(cpu);
    console.log(
      `report ${i + 1}: wall ${wall.toFixed(0)} ms, CPU ${((c.user + c.system) / 1000).toFixed(0)} ms, peak RSS ${hwm().toFixed(0)} MB, heap used after ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MB`,
    );
  }
  await store.close();
  console.log(`written to ${out}`);
})();
