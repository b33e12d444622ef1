import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isMainThread, parentPort, type Worker, workerData } from 'node:worker_threads';
import { openNew, type StoreTarget } from '../stores';
import { renderReport } from '../services/runReport';
import { outageTolerantStore } from '../activities/storeOutage';
import type { ActivityDeps } from '../activities/deps';
import type { StoredResponse } from '../core/model/types';
import { IntervalHelper, intervalHelperEnabled } from './intervalHelper';
import { moduleThread } from './moduleThread';

/**
 * A run's report rendered on a thread of its own, with its own connection to the results store. The statistics of a
 * large report (BCa bootstrap intervals, permutation tests) are seconds of synchronous work; on the activity's thread
 * they would stop its heartbeats (a report heartbeat timeout of 30 s was missed under load) and every other activity of
 * the worker. Here the activity's thread only waits, heartbeating, and the report is the same: renderReport, unchanged.
 *
 * Used by the worker when it runs compiled (dist/), or always with JUDGEFLOW_REPORT_THREAD=1 (run from the sources, the
 * thread compiles them with tsx, as bin/judgeflow.js does); JUDGEFLOW_REPORT_THREAD=0 renders on the activity's thread.
 */
export interface RenderedReport {
  reportPath: string;
  summary: Record<string, number | null>;
}

interface ThreadInput {
  judgeflowReportThread: true;
  target: StoreTarget;
  /** The run to render; absent, the thread loads the report's modules and waits for it as a message (a spare). */
  runId?: string;
  /** A spare's: set to 1 by the worker when the report it waits for is asked while it rehearses one (see below). */
  cancel?: SharedArrayBuffer;
  /** The worker writes the report's responses.jsonl and posts where (ResponsesMessage); the thread moves it in. */
  responsesJsonl?: boolean;
}

/** The worker's word on the responses.jsonl it writes for a report (see ReportThreads.render). */
type ResponsesMessage = { responsesJsonl: string } | { responsesJsonlError: string };

/** Writes a run's responses.jsonl beside its report folder and returns the file (services/runReport.ts writeResponsesBeside). */
export type WriteResponses = () => Promise<string>;

type ThreadAnswer =
  | { ok: true; result: RenderedReport }
  | { ok: false; error: { name: string; message: string; stack?: string; code?: unknown } };

/** A spare's word on a rehearsal: how long it took, or why there was none. */
interface RehearsalAnswer {
  rehearsed: string;
  ms?: number;
  /** The run has more answers than REHEARSAL_MAX_ANSWERS: it is not rehearsed again. */
  tooLarge?: boolean;
  /** The rehearsal's folder, kept with its responses.jsonl for the report (see rehearsedResponses). */
  keptDir?: string;
  error?: string;
}

/**
 * A spare rehearses the report of the run judging on its worker: the whole render, from the store, into a temporary
 * folder that is then removed. The report the run ends with is then rendered by code V8 has compiled already and in a
 * heap grown to its size: 1,200 × 4 answers, 0.72 s on a fresh thread, 0.59 s after one rehearsal on half the verdicts
 * and 0.51 s after two (2026-12-04, docs/bench.md). First FIRST_REHEARSAL_MS after the spare starts, then each time
 * REHEARSAL_GROWTH times as long after the one before, so a long run's rehearsals cost about one report of its final
 * size in all; not at all for a run of more than REHEARSAL_MAX_ANSWERS answers, whose report takes seconds and
 * whose rehearsal would take a core from the run for as long. JUDGEFLOW_REPORT_REHEARSAL=0 turns rehearsals off.
 */
export const FIRST_REHEARSAL_MS = 10_000;
const REHEARSAL_GROWTH = 2;
export const REHEARSAL_MAX_ANSWERS = 20_000;
/** How many rehearsals' answers ReportThreads.rehearsed keeps. */
export const KEPT_REHEARSALS = 20;
/** A run counts as judging on this worker while one of its judge items ended within this long. */
const JUDGING_WITHIN_MS = 10_000;

const FROM_SOURCE = __filename.endsWith('.ts');

/** Whether reports go to a thread in a worker started with `env` (see above). */
export function reportThreadEnabled(env: NodeJS.ProcessEnv): boolean {
  const setting = env.JUDGEFLOW_REPORT_THREAD?.trim();
  return setting === '1' || (setting !== '0' && !FROM_SOURCE);
}

function spawnThread(
  target: StoreTarget,
  env: NodeJS.ProcessEnv,
  runId?: string,
  cancel?: SharedArrayBuffer,
  responsesJsonl = false,
): Worker {
  const input: ThreadInput = {
    judgeflowReportThread: true,
    target,
    ...(runId === undefined ? {} : { runId }),
    ...(cancel ? { cancel } : {}),
    ...(responsesJsonl ? { responsesJsonl } : {}),
  };
  return moduleThread(__filename, { workerData: input, env: { ...env } });
}

/** A run's report rendered on a new thread (one report per thread); its responses.jsonl by `writeResponses`, if given. */
export function renderReportInThread(
  target: StoreTarget,
  env: NodeJS.ProcessEnv,
  runId: string,
  signal?: AbortSignal,
  writeResponses?: WriteResponses,
): Promise<RenderedReport> {
  const thread = spawnThread(target, env, runId, undefined, writeResponses !== undefined);
  return withResponsesWritten(thread, answerOf(thread, runId, signal), writeResponses);
}

/**
 * A report whose responses.jsonl the worker's own thread writes while `thread` renders the rest (ThreadInput
 * .responsesJsonl): the two cores of a small machine both work on the report, the worker's otherwise idle while it
 * waits. Whatever becomes of the report, the file is gone once it has answered (moved into the report, or removed).
 */
async function withResponsesWritten(
  thread: Worker,
  answer: Promise<RenderedReport>,
  writeResponses: WriteResponses | undefined,
): Promise<RenderedReport> {
  if (!writeResponses) return answer;
  const file = writeResponses();
  file.then(
    (written) => thread.postMessage({ responsesJsonl: written } satisfies ResponsesMessage),
    (error: unknown) =>
      thread.postMessage({
        responsesJsonlError: error instanceof Error ? error.message : String(error),
      } satisfies ResponsesMessage),
  );
  try {
    return await answer;
  } finally {
    const written = await file.catch(() => undefined);
    if (written) fs.rmSync(written, { force: true });
  }
}

/** How long a spare thread waits for a report before it ends (its modules hold about 35 MB). */
const SPARE_IDLE_MS = 10 * 60_000;

/**
 * The worker's report threads: `warm()` (called as judging starts) starts a spare thread that loads the report's
 * modules while the run is still judging, so the report of a run that ends soon starts at once instead of after that
 * load (0.34 s on a quiet machine, 2026-12-03, of a 1.6 s report of 1,200 × 4 answers). A spare renders one report;
 * the next `warm()` starts another. An idle spare does not keep the process alive and ends after SPARE_IDLE_MS.
 */
export class ReportThreads {
  private spare?: Spare;
  private closed = false;
  /** The run whose judge item ended last on this worker, and when. */
  private judging?: { runId: string; at: number };
  private readonly rehearsals: boolean;
  /** The latest rehearsals' answers (at most KEPT_REHEARSALS, oldest first), for tests and the bench. */
  readonly rehearsed: RehearsalAnswer[] = [];

  constructor(
    private readonly target: StoreTarget,
    private readonly env: NodeJS.ProcessEnv,
    private readonly rehearsal: { firstMs?: number; maxAnswers?: number } = {},
  ) {
    this.rehearsals = env.JUDGEFLOW_REPORT_REHEARSAL?.trim() !== '0';
  }

  /** Whether the spare is rehearsing a report now. */
  get rehearsing(): boolean {
    return this.spare?.rehearsing === true;
  }

  /** Whether a spare thread is started and waiting. */
  get warmed(): boolean {
    return this.spare !== undefined;
  }

  /** A judge item of `runId` ended: the run a spare rehearses next. */
  judged(runId: string): void {
    this.judging = { runId, at: Date.now() };
  }

  warm(): void {
    if (this.spare || this.closed) return;
    const cancel = new SharedArrayBuffer(4);
    const thread = spawnThread(this.target, this.env, undefined, cancel);
    thread.unref();
    const idle = setTimeout(() => this.drop(thread, true), SPARE_IDLE_MS);
    idle.unref();
    // A spare that failed to start is dropped here; the report then starts a thread of its own, which says why.
    thread.once('error', () => this.drop(thread, false));
    thread.once('exit', () => this.drop(thread, false));
    const spare: Spare = {
      thread,
      idle,
      cancel: new Int32Array(cancel),
      delayMs: this.rehearsal.firstMs ?? FIRST_REHEARSAL_MS,
      tooLarge: new Set(),
    };
    thread.on('message', (answer: RehearsalAnswer) => {
      if (answer.rehearsed === undefined || this.spare !== spare) return;
      this.rehearsed.push(answer);
      // A long-lived worker rehearses a few times a run, run after run: only the latest are worth keeping.
      if (this.rehearsed.length > KEPT_REHEARSALS) this.rehearsed.shift();
      spare.rehearsing = false;
      if (answer.tooLarge) spare.tooLarge.add(answer.rehearsed);
      // The thread removed its earlier folder (see rehearsedResponses); this one goes with the spare if never used.
      if (answer.keptDir) spare.kept = { runId: answer.rehearsed, dir: answer.keptDir };
      this.scheduleRehearsal(spare);
    });
    this.spare = spare;
    this.scheduleRehearsal(spare);
  }

  /** A run's report, on the spare if there is one; its responses.jsonl written by `writeResponses` (see withResponsesWritten). */
  render(runId: string, signal?: AbortSignal, writeResponses?: WriteResponses): Promise<RenderedReport> {
    const spare = this.spare;
    if (!spare) return renderReportInThread(this.target, this.env, runId, signal, writeResponses);
    this.spare = undefined;
    clearTimeout(spare.idle);
    clearTimeout(spare.next);
    // A rehearsal in progress stops at its next read of the store; the report waits at most for the step it is in.
    if (spare.rehearsing) Atomics.store(spare.cancel, 0, 1);
    spare.thread.removeAllListeners('error').removeAllListeners('exit').removeAllListeners('message');
    spare.thread.ref();
    // A rehearsal of this run wrote its responses.jsonl: the thread moves that in if the answers are unchanged (else it
    // writes the file itself), so the worker's thread leaves the second core to the report's interval helper.
    const writer = spare.kept?.runId === runId ? undefined : writeResponses;
    const answer = answerOf(spare.thread, runId, signal);
    spare.thread.postMessage({ runId, responsesJsonl: writer !== undefined });
    return withResponsesWritten(spare.thread, answer, writer).finally(() => removeKept(spare));
  }

  private scheduleRehearsal(spare: Spare): void {
    if (!this.rehearsals) return;
    spare.next = setTimeout(() => {
      if (this.spare !== spare || spare.rehearsing) return;
      spare.delayMs *= REHEARSAL_GROWTH;
      const run = this.judging;
      if (!run || Date.now() - run.at > JUDGING_WITHIN_MS || spare.tooLarge.has(run.runId))
        return this.scheduleRehearsal(spare);
      spare.rehearsing = true;
      spare.thread.postMessage({
        rehearse: run.runId,
        maxAnswers: this.rehearsal.maxAnswers ?? REHEARSAL_MAX_ANSWERS,
      });
    }, spare.delayMs);
    spare.next.unref();
  }

  /**
   * Ends the spare (its worker has stopped): a worker run in a longer-lived process (`judgeflow dev`, a test file) would
   * otherwise leave it there for SPARE_IDLE_MS, and Node stops every such thread as the process exits (tens of them
   * kept a jest worker past jest's 0.5 s wait for it to exit). A report already handed to a thread finishes.
   */
  async close(): Promise<void> {
    this.closed = true;
    const spare = this.spare;
    if (!spare) return;
    if (spare.rehearsing) {
      // Stopped at its next read of the store, a rehearsal removes its folder; it is waited for at most 5 s.
      Atomics.store(spare.cancel, 0, 1);
      await new Promise<void>((resolve) => {
        const waited = setTimeout(resolve, 5_000);
        waited.unref();
        spare.thread.once('message', () => (clearTimeout(waited), resolve()));
      });
    }
    this.drop(spare.thread, false);
    await spare.thread.terminate();
  }

  private drop(thread: Worker, terminate: boolean): void {
    if (this.spare?.thread !== thread) return;
    clearTimeout(this.spare.idle);
    clearTimeout(this.spare.next);
    removeKept(this.spare);
    this.spare = undefined;
    if (terminate) void thread.terminate();
  }
}

interface Spare {
  thread: Worker;
  idle: ReturnType<typeof setTimeout>;
  /** Its rehearsal's stop flag (ThreadInput.cancel). */
  cancel: Int32Array;
  rehearsing?: boolean;
  next?: ReturnType<typeof setTimeout>;
  /** How long after the last rehearsal (or the spare's start) the next one is. */
  delayMs: number;
  tooLarge: Set<string>;
  /** Its latest rehearsal's kept folder (RehearsalAnswer.keptDir). */
  kept?: { runId: string; dir: string };
}

/** A spare's kept rehearsal folder, once its report is done or the spare ends. */
function removeKept(spare: Spare): void {
  if (spare.kept) fs.rmSync(spare.kept.dir, { recursive: true, force: true });
  spare.kept = undefined;
}

/** The one answer of a report thread (it is terminated once it answered, failed or the signal aborted). */
function answerOf(thread: Worker, runId: string, signal?: AbortSignal): Promise<RenderedReport> {
  return new Promise<RenderedReport>((resolve, reject) => {
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      fn();
      void thread.terminate();
    };
    const onAbort = () => settle(() => reject(signal!.reason));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    thread.on('message', (answer: ThreadAnswer | RehearsalAnswer) => {
      if ('rehearsed' in answer) return; // a rehearsal's, ended or stopped before this report
      settle(() =>
        answer.ok
          ? resolve(answer.result)
          : reject(
              Object.assign(new Error(answer.error.message), {
                name: answer.error.name,
                stack: answer.error.stack,
                ...(answer.error.code !== undefined ? { code: answer.error.code } : {}),
              }),
            ),
      );
    });
    thread.once('error', (error) => settle(() => reject(error)));
    thread.once('exit', (code) =>
      settle(() => reject(new Error(`the report thread of run ${runId} exited (code ${code}) before it answered`))),
    );
  });
}

/** The responses.jsonl the worker posts it wrote (ResponsesMessage); listened for at once, so no message is missed. */
function responsesFromWorker(): Promise<string> {
  const file = new Promise<string>((resolve, reject) => {
    const onMessage = (message: ResponsesMessage) => {
      if ('responsesJsonl' in message) resolve(message.responsesJsonl);
      else if ('responsesJsonlError' in message)
        reject(new Error(`the worker could not write responses.jsonl: ${message.responsesJsonlError}`));
      else return;
      parentPort!.off('message', onMessage);
    };
    parentPort!.on('message', onMessage);
  });
  file.catch(() => undefined); // a render that fails first never waits for it: its rejection is not the thread's end
  return file;
}

/** This report thread's interval helper (worker/intervalHelper.ts), started with the thread so it is ready for the report. */
let intervalHelper: IntervalHelper | undefined;
const withHelper = (): Pick<ActivityDeps, 'intervalsAhead'> =>
  intervalHelper ? { intervalsAhead: (requests) => intervalHelper!.start(requests) } : {};

/**
 * This thread's latest rehearsal: its folder, kept with nothing but its responses.jsonl, and the answers that file was
 * written from. The report of that run moves the file in when its answers read then are the same (renderReport's
 * reuseResponses), as they are once a run's answers are all in; the file, about 80 ms for 1,200 × 4 answers, is then
 * written while the run judges, not at its end. The folder is the rehearsal's own (rehearsalDir), outside the run's.
 */
let rehearsedResponses: { runId: string; dir: string; file: string; responses: StoredResponse[] } | undefined;

function dropRehearsedResponses(): void {
  if (rehearsedResponses) fs.rmSync(rehearsedResponses.dir, { recursive: true, force: true });
  rehearsedResponses = undefined;
}

async function serve(input: ThreadInput & { runId: string }, responsesJsonl?: Promise<string>): Promise<void> {
  const store = openNew(input.target);
  let answer: ThreadAnswer;
  try {
    // An unreachable database is waited for here too, as by every activity (activities/storeOutage.ts).
    answer = {
      ok: true,
      result: await renderReport(
        { store: outageTolerantStore(store), env: process.env, ...withHelper() },
        input.runId,
        undefined,
        {
          ...(responsesJsonl ? { responsesJsonl } : {}),
          ...(rehearsedResponses?.runId === input.runId ? { reuseResponses: rehearsedResponses } : {}),
        },
      ),
    };
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    answer = {
      ok: false,
      error: { name: e.name, message: e.message, stack: e.stack, code: (e as { code?: unknown }).code },
    };
  } finally {
    dropRehearsedResponses();
    await store.close().catch(() => undefined);
  }
  parentPort!.postMessage(answer);
}

class RehearsalStopped extends Error {}

/** The store as a rehearsal reads it: every call after the worker set `cancel` throws, which ends the render there. */
function stoppable<T extends object>(store: T, cancel: Int32Array | undefined): T {
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || !cancel) return value;
      return (...args: unknown[]) => {
        if (Atomics.load(cancel, 0)) throw new RehearsalStopped('the report was asked for');
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** Where a rehearsal renders; a spare ended mid-rehearsal (its worker stopped) left its folder, removed an hour on. */
function rehearsalDir(): string {
  const prefix = `jf-report-rehearsal-${process.pid}-`;
  for (const name of fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith(prefix))) {
    const stale = path.join(os.tmpdir(), name);
    const made = fs.statSync(stale, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
    if (Date.now() - made > 3_600_000) fs.rmSync(stale, { recursive: true, force: true });
  }
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A rehearsal (see FIRST_REHEARSAL_MS): the run's report rendered into a temporary folder, then removed. */
async function rehearse(input: ThreadInput, runId: string, maxAnswers: number): Promise<RehearsalAnswer> {
  const cancel = input.cancel ? new Int32Array(input.cancel) : undefined;
  const started = performance.now();
  let dir: string | undefined;
  let store: ReturnType<typeof openNew> | undefined;
  try {
    if (cancel && Atomics.load(cancel, 0)) throw new RehearsalStopped('stopped before it started');
    dir = rehearsalDir();
    store = openNew(input.target);
    const run = await store.getRun(runId);
    const snapshot = run && (await store.getSnapshot(run.snapshotId));
    if (!run || !snapshot) return { rehearsed: runId, error: `run ${runId} is not in the results store` };
    if (snapshot.queryCount * run.copilots.length > maxAnswers) return { rehearsed: runId, tooLarge: true };
    let responses: StoredResponse[] = [];
    await renderReport(
      { store: stoppable(store, cancel), env: process.env, ...withHelper() },
      runId,
      path.join(dir, 'report'),
      { readResponses: (read) => (responses = read) },
    );
    dropRehearsedResponses();
    const file = path.join(dir, 'responses.jsonl');
    fs.renameSync(path.join(dir, 'report', 'responses.jsonl'), file);
    fs.rmSync(path.join(dir, 'report'), { recursive: true, force: true });
    rehearsedResponses = { runId, dir, file, responses };
    const kept = dir;
    dir = undefined; // kept: not removed below
    return { rehearsed: runId, ms: Math.round(performance.now() - started), keptDir: kept };
  } catch (error) {
    return { rehearsed: runId, error: error instanceof Error ? error.message : String(error) };
  } finally {
    await store?.close().catch(() => undefined);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (!isMainThread && (workerData as ThreadInput | undefined)?.judgeflowReportThread) {
  const input = workerData as ThreadInput;
  if (intervalHelperEnabled(process.env)) intervalHelper = new IntervalHelper(process.env);
  if (input.runId !== undefined)
    void serve({ ...input, runId: input.runId }, input.responsesJsonl ? responsesFromWorker() : undefined);
  else {
    // A spare: rehearsals until the report it is for, which starts once a rehearsal in progress has stopped.
    let rehearsal: Promise<unknown> = Promise.resolve();
    const onMessage = (
      message: { runId: string; responsesJsonl?: boolean } | { rehearse: string; maxAnswers: number },
    ) => {
      if ('rehearse' in message) {
        rehearsal = rehearse(input, message.rehearse, message.maxAnswers).then((answer) =>
          parentPort!.postMessage(answer),
        );
        return;
      }
      parentPort!.off('message', onMessage);
      const responsesJsonl = message.responsesJsonl ? responsesFromWorker() : undefined;
      void rehearsal.then(() => serve({ ...input, runId: message.runId }, responsesJsonl));
    };
    parentPort!.on('message', onMessage);
  }
}
