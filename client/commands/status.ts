import type { WorkflowHandle } from '@temporalio/client';
import { temporalClient } from '../temporalSdk';
import type { Command } from '../args';
import { failureReasonLines, type FailureReason } from '../../core/stats/failureReasons';
import { runFailureReasons } from '../failureSummary';
import { InputError } from '../../core/model/inputError';
import { openExistingStore } from '../../stores';
import { startedBeforeVersioning } from '../../worker/versioning';
import { controlQuery, describeBudget, progressQuery, unreported } from '../../contract/control';
import { describeLimitChange } from '../../contract/configChange';
import type { Progress, RunControl, RunResult } from '../../contract/run';
import { answeredWithin, connectClient } from '../connection';
import { reconcileRun } from '../reconcile';
import { progressMode, progressView } from '../progress';
import { withClient } from '../runWorkflow';
import { watch } from '../startRun';

type RunStatus = {
  runId: string;
  status: 'running' | 'paused' | 'completed' | 'failed';
  paused?: Progress['paused'];
  callsInFlight?: number;
  waiting?: string[];
  upgrade?: string;
  warnings?: string[];
  history?: RunControl['history'];
  limits?: RunControl['limits'];
  budget?: RunControl['budget'];
  spent?: Progress['spent'];
  stage: string;
  done: number;
  total: number;
  failures: number;
  reportPath: string | null;
  error?: string;
  stages?: Progress['stages'];
  batches?: Progress['batches'];
  failureReasons?: FailureReason[];
};

/** A run's workflow as Temporal describes it; an unknown id is the user's to fix. */
export async function describeRun(handle: WorkflowHandle, runId: string) {
  try {
    return await handle.describe();
  } catch (error) {
    if (error instanceof temporalClient().WorkflowNotFoundError)
      throw new InputError(`no run ${runId} on this Temporal server (see judgeflow runs)`);
    throw error;
  }
}

/** Status from Temporal (the source of truth for a run's state), with the progress query when a worker answers it. */
export async function runStatus(runId: string): Promise<RunStatus> {
  const client = await connectClient();
  try {
    const handle = client.workflow.getHandle(runId);
    const description = await describeRun(handle, runId);
    const state = description.status.name;
    if (state === 'COMPLETED') {
      const result = (await handle.result()) as RunResult;
      return { ...pick(result.progress), runId, status: 'completed', reportPath: result.reportPath };
    }
    if (state === 'RUNNING') {
      // A run unversioned while workers are versioned was started before worker versioning: this build's worker cannot
      // replay it (its task fails with a nondeterminism error), so status says how to move it instead of "no worker answered".
      if (startedBeforeVersioning(description.raw as never))
        return {
          runId,
          status: 'running',
          stage: 'waiting for an upgrade',
          done: 0,
          total: 0,
          failures: 0,
          reportPath: null,
          upgrade: `run ${runId} was started by a judgeflow release before worker versioning; continue it on this build with: judgeflow resume ${runId}`,
        };
      // A worker that does not answer within 5 s: "no worker answered" below.
      const progress = await answeredWithin(client, 5_000, () => handle.query(progressQuery));
      const warnings = progress?.warnings?.length ? { warnings: progress.warnings } : {};
      // Pauses, tunes and config replacements so far (a run on a build without the query: none shown).
      const control = progress ? await answeredWithin(client, 5_000, () => handle.query(controlQuery)) : undefined;
      const recorded = {
        ...warnings,
        ...(progress?.waiting?.length ? { waiting: progress.waiting } : {}),
        ...(progress?.spent ? { spent: progress.spent } : {}),
        ...(control?.history.length ? { history: control.history } : {}),
        ...(control?.limits && Object.keys(control.limits).length ? { limits: control.limits } : {}),
        ...(control?.budget ? { budget: control.budget } : {}),
      };
      if (progress?.paused)
        return {
          ...pick(progress),
          runId,
          status: 'paused',
          paused: progress.paused,
          ...(progress.callsInFlight !== undefined ? { callsInFlight: progress.callsInFlight } : {}),
          ...recorded,
        };
      if (progress) return { ...pick(progress), runId, status: 'running', ...recorded };
      return {
        runId,
        status: 'running',
        stage: 'unknown (no worker answered)',
        done: 0,
        total: 0,
        failures: 0,
        reportPath: null,
      };
    }
    // Never migrated by a read-only command (stores/migrations.ts): an older store says to run judgeflow store migrate.
    const store = await openExistingStore();
    if (store) await reconcileRun(client, store, runId); // terminated / timed out: the store learns it ended, with the reason
    const stored = store ? await store.getRun(runId) : null;
    const summary = (stored?.summary ?? null) as { error?: unknown } | null;
    return {
      runId,
      status: 'failed',
      stage: state.toLowerCase(),
      done: 0,
      total: 0,
      failures: 0,
      reportPath: stored?.reportPath ?? null,
      ...(typeof summary?.error === 'string' ? { error: summary.error } : {}),
    };
  } finally {
    await client.connection.close();
  }
}

function pick(p: Progress) {
  return {
    stage: p.stage,
    done: p.done,
    total: p.total,
    failures: p.failures,
    reportPath: p.reportPath,
    ...(p.stages ? { stages: p.stages } : {}),
    ...(p.batches ? { batches: p.batches } : {}),
  };
}

/** Keys in the documented order. */
function ordered(s: RunStatus): RunStatus {
  return {
    runId: s.runId,
    status: s.status,
    ...(s.paused ? { paused: s.paused } : {}),
    ...(s.callsInFlight !== undefined ? { callsInFlight: s.callsInFlight } : {}),
    ...(s.upgrade ? { upgrade: s.upgrade } : {}),
    stage: s.stage,
    done: s.done,
    total: s.total,
    failures: s.failures,
    reportPath: s.reportPath,
    ...(s.error ? { error: s.error } : {}),
    ...(s.warnings ? { warnings: s.warnings } : {}),
    ...(s.waiting ? { waiting: s.waiting } : {}),
    ...(s.spent ? { spent: s.spent } : {}),
    ...(s.budget ? { budget: s.budget } : {}),
    ...(s.history ? { history: s.history } : {}),
    ...(s.limits ? { limits: s.limits } : {}),
    ...(s.stages ? { stages: s.stages } : {}),
    ...(s.batches ? { batches: s.batches } : {}),
    ...(s.failureReasons ? { failureReasons: s.failureReasons } : {}),
  };
}

/** A paused run still finishing calls is not idle yet: those calls are kept, and may be the run's last. */
function pausedCalls(calls: number | undefined): string {
  if (calls === undefined) return '';
  return calls
    ? `, ${calls} call(s) in flight finishing (if they are the last, the run completes)`
    : ', no call in flight';
}

/**
 * Judges that judge in batches: the round whose batches are still open at the provider, with their states and counts as
 * last polled; once every batch has ended (between rounds, or the run complete), only how many rounds were run.
 */
export function batchLines(batches: NonNullable<RunStatus['batches']>): string[] {
  return Object.entries(batches).flatMap(([endpoint, lane]) => {
    const open = lane.batches.some((b) => !b.ended);
    const live = lane.live ? `, ${lane.live} item(s) waiting to be asked live` : '';
    const head = `Batch API judging by ${endpoint === 'judge' ? 'the judge' : `judge ${endpoint}`}: `;
    if (!open) return [`${head}${lane.round} batch round(s) finished, none open${live}`];
    return [
      `${head}batch round ${lane.round}${live}`,
      ...lane.batches.map(
        (b) =>
          `  ${b.batchId ?? b.key}: ${b.state}, ${b.counts.succeeded + b.counts.failed}/${b.lines} done${b.counts.failed ? ` (${b.counts.failed} failed)` : ''}${b.error ? ` — ${b.error}` : ''}`,
      ),
    ];
  });
}

/** A run that judges while it collects: both stages' figures. */
function stagesText(s: RunStatus): string {
  if (!s.stages) return '';
  const part = (name: string, c: { done: number; total: number; failures: number }) =>
    `${name} ${c.done}/${c.total}${c.failures ? ` (${c.failures} failed)` : ''}`;
  return ` (${part('collect', s.stages.collect)}, ${part('judge', s.stages.judge)})`;
}

export const statusCommand: Command = {
  name: 'status',
  summary: "show a run's state and progress",
  usage: 'judgeflow status RUN_ID [--json] [--watch [--progress auto|bars|lines]]',
  options: { json: { type: 'boolean' }, watch: { type: 'boolean' }, progress: { type: 'string' } },
  async run({ values, positionals }) {
    const runId = positionals[0];
    if (!runId) throw new InputError(`missing RUN_ID\nUsage: ${this.usage}`);
    if (values.watch) {
      const mode = progressMode(values.progress, Boolean(values.json));
      const first = await runStatus(runId); // also: a clear error for an unknown run
      if (first.status === 'running') {
        const print = (line: string) => (values.json ? console.error(line) : console.log(line));
        await withClient((client) =>
          watch(client.workflow.getHandle(runId), progressView(mode, print)).catch(() => undefined),
        );
      }
    }
    const status = await runStatus(runId);
    const reasons = status.failures ? await runFailureReasons(runId) : [];
    const s = ordered({ ...status, ...(reasons.length ? { failureReasons: reasons } : {}) });
    if (values.json) console.log(JSON.stringify(s));
    else {
      console.log(
        `${s.runId}: ${s.status}${s.paused ? ` (${s.paused.reason}, since ${s.paused.at}; judgeflow resume ${s.runId})${pausedCalls(s.callsInFlight)}` : ''}, stage ${s.stage}, ${s.done}/${s.total} done, ${s.failures} failed${stagesText(s)}${s.error ? `\nReason: ${s.error}` : ''}${(s.warnings ?? []).map((w) => `\nWarning: ${w}`).join('')}${s.reportPath ? `\nReport: ${s.reportPath}` : ''}`,
      );
      if (s.upgrade) console.log(`Upgrade: ${s.upgrade}`);
      if (s.waiting) console.log(['Waiting:', ...s.waiting.map((w) => `  ${w}`)].join('\n'));
      if (s.spent)
        console.log(
          `Spent so far: ${s.spent.usd === null ? '' : `$${s.spent.usd.toFixed(4)}, `}${s.spent.tokens} tokens${unreported(s.spent)}${s.budget ? ` of a budget of ${describeBudget(s.budget)}` : ''}`,
        );
      const changes = (s.history ?? []).filter((h) => h.action === 'tune' || h.action === 'config' || h.budget);
      if (changes.length)
        console.log(
          [
            'Changed while running:',
            ...changes.map(
              (h) =>
                `  ${h.at}: ${h.limits ? h.limits.map(describeLimitChange).join('; ') : h.reason}${h.limits ? ` (${h.reason})` : ''}`,
            ),
          ].join('\n'),
        );
      if (s.batches) console.log(batchLines(s.batches).join('\n'));
      if (reasons.length) console.log(['Why items failed:', ...failureReasonLines(reasons)].join('\n'));
    }
    return 0;
  },
};
