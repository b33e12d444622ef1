import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeTextAtomic } from '../core/io/files';
import { ApplicationFailure, log } from '@temporalio/activity';
import { ApplicationFailureCategory } from '@temporalio/common';
import { gate, type GateResult } from '../core/compare/gate';
import { candidateProblems } from '../core/compare/gateCandidate';
import type { ResultsStore } from '../core/model/store';
import type { AlertOutcome, AlertSettings } from '../contract/snapshot';
import type { ActivityDeps } from './deps';
import { currentAttempt } from './heartbeat';
import { compareStoredRuns, defaultCompareDir, writeComparison } from '../services/storedComparison';

/**
 * A schedule's alert step: gate the run it just made against the schedule's previous completed run (on the queries
 * they share) and POST the verdict. Delivered at most once per run: the outcome is a work row in the store, written
 * once delivered (or given up), and read before anything is sent; the request carries an Idempotency-Key for receivers
 * that de-duplicate the one case left (the POST got through but the worker died before recording it).
 */

export interface AlertBody extends GateResult {
  schedule: string;
  runId: string;
  baselineRunId: string | null;
  /** The compare of the two runs: judgeflow view's page when JUDGEFLOW_VIEW_URL is set on the worker, else the report file. */
  compare: string | null;
  /** How the scheduled run ended: a failed or cancelled one is alerted whatever `on` says, since no gate can vouch for it. */
  runStatus: 'completed' | 'failed';
  /** Why it failed (or was cancelled), in the run's own words. */
  error?: string;
  /** Why the gate cannot pass the run whatever its scores (core/compare/gateCandidate.ts: not completed, too little coverage). */
  problems: string[];
}

/** Redirects followed at most, and only to the same origin (scheme, host and port). */
const MAX_REDIRECTS = 3;

/**
 * POST the alert, following a 307/308 only within the webhook's own origin: the body and its Idempotency-Key are never
 * re-posted to another host (a redirect there may be an open redirect, or a token-bearing URL moved). The answer is the
 * final response, whatever it is, so the outcome records what the receiver finally said.
 */
async function postAlert(
  url: string,
  body: string,
  idempotencyKey: string,
): Promise<{ status: number; ok: boolean; refused?: string }> {
  let target = new URL(url);
  for (let hop = 0; ; hop++) {
    const res = await fetch(target, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body,
      signal: AbortSignal.timeout(20_000),
    });
    await res.body?.cancel().catch(() => undefined);
    const location = res.headers.get('location');
    if (![307, 308].includes(res.status) || !location) return { status: res.status, ok: res.ok };
    const next = new URL(location, target);
    if (next.origin !== target.origin)
      return { status: res.status, ok: false, refused: `redirected to another host (${next.origin}), not followed` };
    if (hop >= MAX_REDIRECTS) return { status: res.status, ok: false, refused: `more than ${MAX_REDIRECTS} redirects` };
    target = next;
  }
}

const workKey = (runId: string) => `alert:${runId}`;

/** The schedule's last completed run before `runId` (its rows are newest first). */
async function previousRun(store: ResultsStore, schedule: string, runId: string): Promise<string | null> {
  const ids = (await store.scheduleSnapshots(schedule)).flatMap((r) => (r.runId ? [r.runId] : []));
  const at = ids.indexOf(runId);
  if (at < 0) return null;
  for (const id of ids.slice(at + 1)) if ((await store.getRun(id))?.status === 'completed') return id;
  return null;
}

/** The outcome, also in the run's report.json (`alert`), so the report says whether anyone was told. */
function recordInReport(reportPath: string | null, outcome: AlertOutcome & { url: string; at: string }): void {
  if (!reportPath || !fs.existsSync(reportPath)) return;
  const report = JSON.parse(fs.readFileSync(reportPath, 'utf8'));
  writeTextAtomic(reportPath, JSON.stringify({ ...report, alert: outcome }, null, 2) + '\n');
}

/** The gate's verdict on the scheduled run, or why there is none (a failed run, no earlier completed run). */
async function alertBody(
  store: ResultsStore,
  env: ActivityDeps['env'],
  schedule: string,
  runId: string,
  failure: string | undefined,
): Promise<AlertBody> {
  const run = await store.getRun(runId);
  const baselineRunId = await previousRun(store, schedule, runId);
  const empty = {
    regressions: [],
    improvements: [],
    baseline: baselineRunId ?? '',
    candidate: runId,
    schedule,
    runId,
    baselineRunId,
    compare: null,
  };
  const error = failure ?? ((run?.summary as { error?: unknown } | null)?.error as string | undefined);
  if (failure || !run || run.status !== 'completed')
    return {
      ...empty,
      runStatus: 'failed',
      error: error ?? `the run is ${run?.status ?? 'not in the store'}`,
      problems: [`run ${runId} did not complete${error ? `: ${error}` : ''}`],
    };
  if (!baselineRunId) return { ...empty, runStatus: 'completed', problems: [] };
  const { comparison, runB } = await compareStoredRuns(store, baselineRunId, runId);
  const files = writeComparison(defaultCompareDir(runB, baselineRunId), comparison);
  const view = env.JUDGEFLOW_VIEW_URL?.replace(/\/+$/, '');
  const compare = view
    ? `${view}/compare?a=${encodeURIComponent(baselineRunId)}&b=${encodeURIComponent(runId)}`
    : pathToFileURL(path.resolve(files.html)).href;
  return {
    ...gate(comparison),
    schedule,
    runId,
    baselineRunId,
    compare,
    runStatus: 'completed',
    problems: candidateProblems(run, comparison),
  };
}

export function alertActivities({ store, env }: ActivityDeps) {
  return {
    /** `failure`: the scheduled run failed or was cancelled (the workflow passes the reason; the run may not be in the store). */
    async refreshAlert({
      schedule,
      runId,
      alert,
      lastAttempt,
      failure,
    }: {
      schedule: string;
      runId: string;
      alert: AlertSettings;
      lastAttempt: number;
      failure?: string;
    }): Promise<AlertOutcome> {
      const done = await store.getWork<AlertOutcome>(workKey(runId), 'outcome');
      if (done) return { ...done, status: done.status === 'delivered' ? 'already-delivered' : done.status };
      const attempt = currentAttempt();
      const run = await store.getRun(runId);
      const body = await alertBody(store, env, schedule, runId, failure);
      const { baselineRunId } = body;
      const regressions = body.regressions.map((r) => r.copilot);
      const finish = async (outcome: AlertOutcome) => {
        await store.putWork(workKey(runId), 'outcome', outcome);
        recordInReport(run?.reportPath ?? null, {
          ...outcome,
          url: alert.url ?? `$${alert.urlEnv}`,
          at: new Date().toISOString(),
        });
        return outcome;
      };
      if (alert.on === 'regression' && !regressions.length && !body.problems.length)
        return finish({
          status: baselineRunId ? 'not-needed' : 'no-baseline',
          baselineRunId,
          regressions,
          attempts: 0,
        });
      const url = alert.url ?? (alert.urlEnv ? env[alert.urlEnv] : undefined);
      if (!url)
        return finish({
          status: 'failed',
          baselineRunId,
          regressions,
          attempts: attempt,
          error: `${alert.urlEnv} is not set in the worker's environment (the alert URL)`,
        });
      // Named by its variable when it came from the environment, so a token in it stays out of reports and errors.
      const where = alert.url ?? `$${alert.urlEnv}`;
      let error: string;
      let httpStatus: number | undefined;
      try {
        const res = await postAlert(url, JSON.stringify(body), `judgeflow-alert-${runId}`);
        httpStatus = res.status;
        if (res.ok) return finish({ status: 'delivered', baselineRunId, regressions, attempts: attempt, httpStatus });
        error = `HTTP ${res.status} from ${where}${res.refused ? `: ${res.refused}` : ''}`;
      } catch (e) {
        error = `${(e as Error).message} (${where})`;
      }
      if (attempt < lastAttempt) {
        // One line per failed attempt; the failure Temporal retries is benign, so the worker logs no stack trace for it.
        log.warn(`alert for ${runId} not delivered, attempt ${attempt} of ${lastAttempt}: ${error}`);
        throw ApplicationFailure.create({
          message: `alert not delivered, attempt ${attempt} of ${lastAttempt}: ${error}`,
          type: 'AlertNotDelivered',
          category: ApplicationFailureCategory.BENIGN,
        });
      }
      log.warn(`alert for ${runId} not delivered after ${attempt} attempt(s), recorded as failed: ${error}`);
      return finish({
        status: 'failed',
        baselineRunId,
        regressions,
        attempts: attempt,
        error,
        ...(httpStatus !== undefined ? { httpStatus } : {}),
      });
    },
  };
}
