import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeTextAtomic } from '../core/files';
import { gate, type GateResult } from '../core/gate';
import type { ResultsStore } from '../core/store';
import type { AlertOutcome, AlertSettings } from '../workflows/snapshotTypes';
import type { ActivityDeps } from './deps';
import { currentAttempt } from './heartbeat';
import { compareStoredRuns, defaultCompareDir, writeComparison } from './storedComparison';

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

export function alertActivities({ store, env }: ActivityDeps) {
  return {
    async refreshAlert({ schedule, runId, alert, lastAttempt }: { schedule: string; runId: string; alert: AlertSettings; lastAttempt: number }): Promise<AlertOutcome> {
      const done = await store.getWork<AlertOutcome>(workKey(runId), 'outcome');
      if (done) return { ...done, status: done.status === 'delivered' ? 'already-delivered' : done.status };
      const attempt = currentAttempt();
      const run = await store.getRun(runId);
      const baselineRunId = await previousRun(store, schedule, runId);
      let body: AlertBody = { regressions: [], improvements: [], baseline: baselineRunId ?? '', candidate: runId, schedule, runId, baselineRunId, compare: null };
      if (baselineRunId) {
        const { comparison, runB } = await compareStoredRuns(store, baselineRunId, runId);
        const files = writeComparison(defaultCompareDir(runB, baselineRunId), comparison);
        const view = env.JUDGEFLOW_VIEW_URL?.replace(/\/+$/, '');
        const compare = view ? `${view}/compare?a=${encodeURIComponent(baselineRunId)}&b=${encodeURIComponent(runId)}` : pathToFileURL(path.resolve(files.html)).href;
        body = { ...gate(comparison), schedule, runId, baselineRunId, compare };
      }
      const regressions = body.regressions.map((r) => r.copilot);
      const finish = async (outcome: AlertOutcome) => {
        await store.putWork(workKey(runId), 'outcome', outcome);
        recordInReport(run?.reportPath ?? null, { ...outcome, url: alert.url ?? `$${alert.urlEnv}`, at: new Date().toISOString() });
        return outcome;
      };
      if (alert.on === 'regression' && !regressions.length) return finish({ status: baselineRunId ? 'not-needed' : 'no-baseline', baselineRunId, regressions, attempts: 0 });
      const url = alert.url ?? (alert.urlEnv ? env[alert.urlEnv] : undefined);
      if (!url) return finish({ status: 'failed', baselineRunId, regressions, attempts: attempt, error: `${alert.urlEnv} is not set in the worker's environment (the alert URL)` });
      // Named by its variable when it came from the environment, so a token in it stays out of reports and errors.
      const where = alert.url ?? `$${alert.urlEnv}`;
      let error: string;
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': `judgeflow-alert-${runId}` },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(20_000),
        });
        if (res.ok) return finish({ status: 'delivered', baselineRunId, regressions, attempts: attempt });
        error = `HTTP ${res.status} from ${where}`;
      } catch (e) {
        error = `${(e as Error).message} (${where})`;
      }
      // Retried by Temporal with back-off; the last attempt records the failure instead of failing the refresh.
      if (attempt < lastAttempt) throw new Error(`alert not delivered, attempt ${attempt} of ${lastAttempt}: ${error}`);
      return finish({ status: 'failed', baselineRunId, regressions, attempts: attempt, error });
    },
  };
}
