// Memory probe for a worker process (docs/bench.md, issue 35): preload it into the bench's workers with
//   MEMPROBE_DIR=/tmp/probe JUDGEFLOW_BENCH_WORKER_NODE_ARGS="-r $PWD/scripts/memory-probe.js" judgeflow bench ...
// Node runs a -r module in every worker thread too, so each isolate (the main one, Temporal's workflow thread, each
// report thread) appends its heap statistics every MEMPROBE_MS (1000) ms to MEMPROBE_DIR/mem-PID.jsonl; the main
// thread adds the process's VmRSS, VmHWM, RssAnon and RssFile. MEMPROBE_SNAP_AT=60,100 writes heap snapshots of the
// main isolate that many seconds after start (a snapshot leaves about 160 MB of native memory behind: a run with
// snapshots is not a measurement of its peak). Summed up by scripts/memory-probe-summary.js.
const fs = require('fs');
const v8 = require('v8');
const wt = require('worker_threads');
const dir = process.env.MEMPROBE_DIR || require('os').tmpdir() + '/judgeflow-memory-probe';
fs.mkdirSync(dir, { recursive: true });
const file = `${dir}/mem-${process.pid}.jsonl`;
const kind = wt.isMainThread ? 'main' : wt.workerData && wt.workerData.judgeflowReportThread ? 'report' : 'thread';
const tid = wt.threadId;
function status() {
  const s = fs.readFileSync('/proc/self/status', 'utf8');
  const g = (k) => Number((s.match(new RegExp('^' + k + ':\\s+(\\d+)', 'm')) || [])[1] || 0) / 1024;
  return { rss: g('VmRSS'), hwm: g('VmHWM'), anon: g('RssAnon'), file: g('RssFile') };
}
function take() {
  const h = v8.getHeapStatistics();
  const line = {
    t: Date.now(),
    kind,
    tid,
    used: h.used_heap_size / 1048576,
    total: h.total_heap_size / 1048576,
    phys: h.total_physical_size / 1048576,
    ext: h.external_memory / 1048576,
    malloced: h.malloced_memory / 1048576,
    ctx: h.number_of_native_contexts,
    detached: h.number_of_detached_contexts,
  };
  if (kind === 'main') Object.assign(line, status(), { ab: process.memoryUsage().arrayBuffers / 1048576 });
  fs.appendFileSync(file, JSON.stringify(line) + '\n');
}
const timer = setInterval(take, Number(process.env.MEMPROBE_MS || 1000));
timer.unref();
take();
if (kind === 'main')
  process.on('SIGUSR2', () => {
    try {
      v8.writeHeapSnapshot(`${dir}/main-${process.pid}-${Date.now()}.heapsnapshot`);
    } catch {}
  });
if (kind === 'main' && process.env.MEMPROBE_SNAP_AT)
  for (const at of process.env.MEMPROBE_SNAP_AT.split(',').map(Number))
    setTimeout(() => {
      try {
        v8.writeHeapSnapshot(`${dir}/main-${process.pid}-${at}s.heapsnapshot`);
      } catch (e) {
        fs.appendFileSync(file, JSON.stringify({ err: String(e) }) + '\n');
      }
    }, at * 1000).unref();
