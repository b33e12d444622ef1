import fs from 'node:fs';
import Database from 'better-sqlite3';
import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import path from 'node:path';
import { renderReport, writeResponsesBeside } from '../../services/runReport';
import { renderReportInThread, ReportThreads } from '../../worker/reportThread';
import { benchmarkRun } from '../../workflows';
import { runInput } from '../../client/startRun';
import { latticeGrid, runConfig, simCopilots, tempDir, withWorker } from '../support/harness';
import { simServersForFile } from '../support/sims';
import { openNew } from '../../stores';
import { writeFinishedRun } from '../support/studyRun';
import { loadConfiguredRubric, protocolFor } from '../../rubrics';

jest.setTimeout(300_000);

const sim = simServersForFile({ judge: { latencyMs: 0 }, copilots: { latencyMs: 0 } });

/** The longest gap between ticks of a 10 ms timer while `work` runs: how long this thread could not heartbeat. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number; tookMs: number }> {
  let last = Date.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = Date.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 10);
  const started = Date.now();
  try {
    const result = await work();
    return { result, stallMs: Math.max(stallMs, Date.now() - last), tookMs: Date.now() - started };
  } finally {
    clearInterval(timer);
  }
}

const withoutTime = (report: Record<string, unknown>) => ({ ...report, generatedAt: null });

test("a run's report rendered on the report thread: the activity's thread keeps ticking (heartbeats), and the report is the one rendered in place", async () => {
  // JUDGEFLOW_REPORT_THREAD=1: the worker of this test (run from the sources) renders writeReport on the thread too.
  await withWorker(
    'report-thread',
    async (world) => {
      // 240 queries × 3 copilots: BCa intervals over ≥ 100 queries, a second or more of statistics on this machine.
      const queries = [0, 1, 2].flatMap((k) => latticeGrid(16, 5).map((q) => ({ ...q, id: `${String(q.id)}-${k}` })));
      const runId = `report-thread-${Date.now()}`;
      const cfg = runConfig(tempDir('jf-report-thread-'), {
        protocol: 'lattice',
        queries,
        judge: { baseURL: sim.judge.url, model: 'sim-judge', concurrency: 16 },
        copilots: simCopilots(sim.copilots.url, { A: 'sim-thorough', B: 'sim-terse', C: 'sim-thorough' }).map((c) => ({
          ...c,
          concurrency: 16,
        })),
      });
      const { reportPath } = await world.client.workflow.execute(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(cfg, runId)],
      });
      const written = JSON.parse(fs.readFileSync(reportPath, 'utf8'));
      expect(Object.keys(written.copilots).sort()).toEqual(['A', 'B', 'C']);
      expect(written.copilots.A.ci95.method).toBe('bca');

      const target = { kind: 'sqlite' as const, file: world.storeFile };
      const threaded = await longestStall(() => renderReportInThread(target, process.env, runId));
      const inPlaceDir = path.join(tempDir('jf-report-in-place-'), 'report');
      const inPlace = await longestStall(() =>
        renderReport({ store: world.store, env: process.env }, runId, inPlaceDir),
      );
      // The same report either way (its time of writing aside), and the same summary.
      expect(threaded.result.summary).toEqual(inPlace.result.summary);
      expect(withoutTime(JSON.parse(fs.readFileSync(threaded.result.reportPath, 'utf8')))).toEqual(
        withoutTime(JSON.parse(fs.readFileSync(inPlace.result.reportPath, 'utf8'))),
      );
      // The run's own report, whose responses.jsonl the writeReport activity wrote on its thread: the same file, and
      // nothing of it left beside the report's folder.
      const jsonl = (report: string) => fs.readFileSync(path.join(path.dirname(report), 'responses.jsonl'), 'utf8');
      expect(jsonl(reportPath).split('\n').filter(Boolean)).toHaveLength(720);
      expect(jsonl(reportPath)).toBe(jsonl(inPlace.result.reportPath));
      expect(fs.readdirSync(path.dirname(path.dirname(reportPath))).filter((n) => n.includes('.responses-'))).toEqual(
        [],
      );
      // In place, the statistics hold this thread for a stretch; on the thread, it stays free to heartbeat.
      process.stderr.write(
        `report of 240 × 3: on its thread ${threaded.tookMs} ms (longest stall here ${threaded.stallMs} ms); in place ${inPlace.tookMs} ms (longest stall ${inPlace.stallMs} ms)\n`,
      );
      expect(threaded.stallMs).toBeLessThan(Math.max(250, inPlace.stallMs / 2));
    },
    { ...process.env, JUDGEFLOW_REPORT_THREAD: '1' },
  );
});

test('a report that fails on its thread fails with its own error; an abort ends the thread', async () => {
  const file = path.join(tempDir('jf-report-thread-missing-'), 'results.db');
  await expect(renderReportInThread({ kind: 'sqlite', file }, process.env, 'no-such-run')).rejects.toThrow(
    /run no-such-run is not in the results store/,
  );
  const controller = new AbortController();
  const pending = renderReportInThread({ kind: 'sqlite', file }, process.env, 'no-such-run', controller.signal);
  controller.abort(new Error('the activity was cancelled'));
  await expect(pending).rejects.toThrow('the activity was cancelled');
});

test("the worker's spare report thread: warmed once, it renders the next report (its errors too), and the next warm starts another", async () => {
  const file = path.join(tempDir('jf-report-thread-spare-'), 'results.db');
  const threads = new ReportThreads({ kind: 'sqlite', file }, process.env);
  expect(threads.warmed).toBe(false);
  threads.warm();
  threads.warm(); // one spare, however often judging says it started
  expect(threads.warmed).toBe(true);
  await expect(threads.render('no-such-run')).rejects.toThrow(/run no-such-run is not in the results store/);
  expect(threads.warmed).toBe(false); // the spare rendered it
  // Without a spare, a thread of its own; an abort ends a spare's render as it ends any.
  await expect(threads.render('still-missing')).rejects.toThrow(/run still-missing is not in the results store/);
  threads.warm();
  const controller = new AbortController();
  const pending = threads.render('no-such-run', controller.signal);
  controller.abort(new Error('the activity was cancelled'));
  await expect(pending).rejects.toThrow('the activity was cancelled');
  expect(threads.warmed).toBe(false);
});

test("closed with its worker, the spare report thread ends and no later warm starts one (an in-process worker's process can exit)", async () => {
  const file = path.join(tempDir('jf-report-thread-close-'), 'results.db');
  // The threads ReportThreads starts, seen as they are made. (Counting the process's OS threads instead was flaky:
  // other threads of the jest process come and go in the same seconds.)
  const started: Worker[] = [];
  // The module object itself (an import would be a copy under the test transform), so reportThread's `new Worker` sees it.
  const workerThreads: typeof import('node:worker_threads') = require('node:worker_threads');
  const Original = workerThreads.Worker;
  workerThreads.Worker = class extends Original {
    constructor(...args: ConstructorParameters<typeof Worker>) {
      super(...args);
      started.push(this);
    }
  };
  try {
    const reports = new ReportThreads({ kind: 'sqlite', file }, process.env);
    reports.warm();
    expect(reports.warmed).toBe(true);
    expect(started).toHaveLength(1);
    const [spare] = started;
    const exited = new Promise<number>((resolve) => spare.once('exit', resolve));
    await new Promise((resolve) => spare.once('online', resolve)); // running, its modules loading
    await reports.close();
    expect(reports.warmed).toBe(false);
    // The thread itself has stopped, not only been told to.
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('the spare thread did not exit within 10 s')), 10_000).unref(),
    );
    await Promise.race([exited, timeout]);
    expect(spare.threadId).toBe(-1);
    reports.warm(); // judging that starts on a stopped worker's activity: nothing to warm for
    expect(reports.warmed).toBe(false);
    expect(started).toHaveLength(1);
  } finally {
    workerThreads.Worker = Original;
  }
});

/** A finished 20 × 4 LATTICE run in a new store, and its report rendered in place (into `dir`/in-place). */
async function finishedRun(prefix: string, runId: string) {
  const dir = tempDir(prefix);
  const file = path.join(dir, 'results.db');
  const store = openNew({ kind: 'sqlite', file });
  const output = path.join(dir, 'runs');
  await writeFinishedRun(store, runId, output);
  const rubric = loadConfiguredRubric(protocolFor('lattice'), undefined);
  await store.putRubric('rubric-test', 'lattice', rubric.content);
  const inPlace = await renderReport({ store, env: process.env }, runId, path.join(dir, 'in-place'));
  return { dir, file, store, output, inPlace };
}

test("the spare rehearses the judging run's report, writing nothing, and then renders the real one; a run too large is not rehearsed", async () => {
  const runId = 'rehearsed-run';
  const { file, store, output, inPlace } = await finishedRun('jf-rehearsal-test-', runId);
  await store.close();
  fs.rmSync(output, { recursive: true, force: true });

  const threads = new ReportThreads({ kind: 'sqlite', file }, process.env, { firstMs: 50 });
  try {
    threads.judged(runId);
    threads.warm();
    // Rehearsals follow each other (50 ms, then 100, 200 … after the one before) while the run judges.
    await until(() => threads.rehearsed.length >= 2, 60_000, 'two rehearsals');
    for (const r of threads.rehearsed) {
      expect(r).toEqual({ rehearsed: runId, ms: expect.any(Number), keptDir: expect.any(String) });
    }
    // Each keeps its folder (its responses.jsonl) until the next rehearsal: the earlier ones are gone.
    expect(threads.rehearsed.slice(0, -1).filter((r) => fs.existsSync(r.keptDir!))).toEqual([]);
    // A rehearsal writes nothing where the run's report goes.
    expect(fs.existsSync(output)).toBe(false);
    threads.judged(runId);
    // The report asked for while the spare rehearses: the rehearsal stops, and the report is the real one.
    await until(() => threads.rehearsing, 60_000, 'a rehearsal in progress');
    const rendered = await threads.render(runId);
    expect(rendered.summary).toEqual(inPlace.summary);
    expect(withoutTime(JSON.parse(fs.readFileSync(rendered.reportPath, 'utf8')))).toEqual(
      withoutTime(JSON.parse(fs.readFileSync(inPlace.reportPath, 'utf8'))),
    );
    // The report is done: no rehearsal folder of it is left.
    expect(threads.rehearsed.filter((r) => r.keptDir && fs.existsSync(r.keptDir))).toEqual([]);
  } finally {
    await threads.close();
  }

  // 20 queries × 4 copilots is above a limit of 79 answers: the spare says so once and rehearses it no more.
  const small = new ReportThreads({ kind: 'sqlite', file }, process.env, { firstMs: 20, maxAnswers: 79 });
  try {
    small.judged(runId);
    small.warm();
    await until(() => small.rehearsed.length >= 1, 60_000, 'the size check');
    expect(small.rehearsed[0]).toEqual({ rehearsed: runId, tooLarge: true });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(small.rehearsed).toHaveLength(1);
    expect(small.rehearsing).toBe(false);
  } finally {
    await small.close();
  }
  // Closed while it rehearses (its worker stopping): the rehearsal stops and removes its folder.
  const closing = new ReportThreads({ kind: 'sqlite', file }, process.env, { firstMs: 20 });
  closing.judged(runId);
  closing.warm();
  // Folders of this process's rehearsals made from now on (one left by an earlier process of the same pid is not ours).
  const before = new Set(fs.readdirSync(os.tmpdir()));
  const rehearsalDirs = () =>
    fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith(`jf-report-rehearsal-${process.pid}-`) && !before.has(n));
  await until(() => rehearsalDirs().length > 0, 60_000, 'a rehearsal rendering');
  await closing.close();
  expect(rehearsalDirs()).toEqual([]);
  // Turned off, none at all.
  const off = new ReportThreads(
    { kind: 'sqlite', file },
    { ...process.env, JUDGEFLOW_REPORT_REHEARSAL: '0' },
    { firstMs: 20 },
  );
  try {
    off.judged(runId);
    off.warm();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(off.rehearsed).toHaveLength(0);
  } finally {
    await off.close();
  }
});

test("responses.jsonl written by the worker's thread while the report thread renders the rest: the same file, moved in; a failed write fails the report and leaves nothing", async () => {
  const runId = 'responses-run';
  const { dir, file, store, output, inPlace } = await finishedRun('jf-report-responses-', runId);
  const expected = fs.readFileSync(path.join(dir, 'in-place', 'responses.jsonl'), 'utf8');
  expect(expected.split('\n').filter(Boolean)).toHaveLength(80);
  const deps = { store, env: process.env };
  let wrote: string | undefined;
  const writeResponses = async () => (wrote = await writeResponsesBeside(deps, runId));
  // Files beside the run's folder other than the folder itself: none once a report has answered.
  const leftBeside = () => fs.readdirSync(output).filter((n) => n !== runId);
  const threads = new ReportThreads({ kind: 'sqlite', file }, process.env);
  try {
    for (const spare of [true, false]) {
      if (spare) threads.warm();
      wrote = undefined;
      const rendered = await threads.render(runId, undefined, writeResponses);
      expect(wrote).toBeDefined();
      expect(path.dirname(wrote!)).toBe(output);
      expect(fs.readFileSync(path.join(path.dirname(rendered.reportPath), 'responses.jsonl'), 'utf8')).toBe(expected);
      expect(rendered.summary).toEqual(inPlace.summary);
      expect(leftBeside()).toEqual([]);
    }
    // The file the worker wrote is the one the report holds (not one the report thread wrote itself).
    threads.warm();
    const marked = await threads.render(runId, undefined, async () => {
      const beside = path.join(output, '.marked.jsonl');
      fs.writeFileSync(beside, '{"written":"by the worker"}\n');
      return beside;
    });
    expect(fs.readFileSync(path.join(path.dirname(marked.reportPath), 'responses.jsonl'), 'utf8')).toBe(
      '{"written":"by the worker"}\n',
    );
    // The worker's write fails: so does the report, with its reason; the report folder keeps the last whole report.
    const before = fs.readFileSync(path.join(output, runId, 'report.json'), 'utf8');
    threads.warm();
    await expect(
      threads.render(runId, undefined, async () => {
        throw new Error('disk full');
      }),
    ).rejects.toThrow(/the worker could not write responses.jsonl: disk full/);
    expect(fs.readFileSync(path.join(output, runId, 'report.json'), 'utf8')).toBe(before);
    expect(leftBeside()).toEqual([]);
    // The report fails on its own (its run is not there): the file the worker wrote is removed all the same.
    threads.warm();
    await expect(threads.render('no-such-run', undefined, () => writeResponsesBeside(deps, runId))).rejects.toThrow(
      /run no-such-run is not in the results store/,
    );
    expect(leftBeside()).toEqual([]);
  } finally {
    await threads.close();
    await store.close();
  }
});

test("a rehearsal's responses.jsonl goes into the report when the run's answers are unchanged; changed, the report writes its own", async () => {
  const runId = 'kept-responses-run';
  const { dir, file, store, output, inPlace } = await finishedRun('jf-report-kept-', runId);
  const expected = fs.readFileSync(path.join(dir, 'in-place', 'responses.jsonl'), 'utf8');
  const deps = { store, env: process.env };
  let workerWrote = 0;
  const writeResponses = async () => (workerWrote++, writeResponsesBeside(deps, runId));
  const jsonlOf = (report: string) => fs.readFileSync(path.join(path.dirname(report), 'responses.jsonl'), 'utf8');
  // One rehearsal of the run, then none that could replace its file (the spare rehearses the run judging last).
  const rehearsedOnce = async (threads: ReportThreads) => {
    threads.judged(runId);
    threads.warm();
    const before = threads.rehearsed.length;
    await until(() => threads.rehearsed.length > before, 60_000, 'a rehearsal');
    threads.judged('another-run');
    const kept = threads.rehearsed.at(-1)!.keptDir!;
    expect(fs.readdirSync(kept)).toEqual(['responses.jsonl']);
    expect(fs.readFileSync(path.join(kept, 'responses.jsonl'), 'utf8')).toBe(expected);
    // Marked, to tell the kept file from one written afresh.
    fs.writeFileSync(path.join(kept, 'responses.jsonl'), '{"kept":"by the rehearsal"}\n');
    return kept;
  };
  const threads = new ReportThreads({ kind: 'sqlite', file }, process.env, { firstMs: 200 });
  try {
    const kept = await rehearsedOnce(threads);
    const rendered = await threads.render(runId, undefined, writeResponses);
    expect(jsonlOf(rendered.reportPath)).toBe('{"kept":"by the rehearsal"}\n');
    expect(workerWrote).toBe(0);
    expect(rendered.summary).toEqual(inPlace.summary);
    expect(fs.existsSync(kept)).toBe(false);

    // An answer changed after the rehearsal (a failed answer asked afresh): the report writes the file from the store.
    const kept2 = await rehearsedOnce(threads);
    const db = new Database(file);
    const changed = db
      .prepare("UPDATE responses SET text = 'asked afresh' WHERE run_id = ? AND query_id = ? AND copilot = ?")
      .run(runId, 'q01', 'Aurora');
    expect(changed.changes).toBe(1);
    db.close();
    const fresh = await renderReport(deps, runId, path.join(dir, 'fresh'));
    const again = await threads.render(runId, undefined, writeResponses);
    expect(jsonlOf(again.reportPath)).toBe(jsonlOf(fresh.reportPath));
    expect(jsonlOf(again.reportPath)).toContain('asked afresh');
    expect(workerWrote).toBe(0);
    expect(fs.existsSync(kept2)).toBe(false);
    expect(fs.readdirSync(output).filter((n) => n !== runId)).toEqual([]);
  } finally {
    await threads.close();
    await store.close();
  }
});

/** Waits (polling every 20 ms) until `done` holds; fails naming `what` after `ms`. */
async function until(done: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
