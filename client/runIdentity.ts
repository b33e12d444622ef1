import type { Client } from '@temporalio/client';
import { contentHash } from '../core/model/hashing';
import type { ResultsStore, RunRecord } from '../core/model/store';
import { snapshotIdOf } from '../core/snapshots/snapshots';
import { loadConfiguredRubric, protocolFor } from '../rubrics';
import type { RunConfig } from './config';

/**
 * What makes two `judgeflow run` invocations the same run: the loaded config (without where its reports go and its priority), the
 * snapshot its queries make and the rubric version that judges them. The config holds the names of secrets'
 * variables, never their values, so the key carries no secret. A run started again with the same key continues the
 * open run (or reports the finished one) instead of paying for the work a second time.
 */
export interface RunIdentity {
  key: string;
  snapshotId: string;
  rubricVersion: string;
}

export function runIdentity(config: RunConfig): RunIdentity {
  const protocol = protocolFor(config.protocol);
  const snapshotId = snapshotIdOf(protocol.parseQueries(config.queries));
  const rubricVersion = loadConfiguredRubric(protocol, config.rubric).version;
  // Where reports go and how the run queues among others (priority) change nothing it asks or answers.
  const { output: _output, priority: _priority, ...judged } = config;
  return { key: `run-${contentHash({ config: judged, snapshotId, rubricVersion }, 24)}`, snapshotId, rubricVersion };
}

/** The key stored with a run (in its record's config and its workflow's memo); null for runs started before keys. */
export const runKeyOf = (run: Pick<RunRecord, 'config'>): string | null => {
  const key = (run.config as { runKey?: unknown } | null)?.runKey;
  return typeof key === 'string' ? key : null;
};

export type SameRun =
  | { state: 'open'; runId: string; startedAt: string | null }
  | { state: 'completed'; run: RunRecord }
  | { state: 'failed'; run: RunRecord };

/**
 * The run with this key, if any: one still open on the cluster (found by its memo, so a run whose first activity never
 * stored its record counts too, or by a `running` store record whose workflow Temporal still runs — a resumed run's
 * new execution), else the newest completed one in the store, else the newest that ended otherwise.
 */
export async function findSameRun(args: {
  key: string;
  client: Client;
  taskQueue: string;
  store: ResultsStore | null;
}): Promise<SameRun | null> {
  const open = await openRunWithKey(args.client, args.taskQueue, args.key);
  if (open) return open;
  const runs = (await args.store?.listRuns()) ?? [];
  const same = runs.filter((r) => runKeyOf(r) === args.key).sort((a, b) => b.startedAt.localeCompare(a.startedAt));
  for (const run of same.filter((r) => r.status === 'running')) {
    const described = await args.client.workflow
      .getHandle(run.runId)
      .describe()
      .catch(() => null);
    if (described?.status.name === 'RUNNING') return { state: 'open', runId: run.runId, startedAt: run.startedAt };
  }
  const completed = same.find((r) => r.status === 'completed');
  if (completed) return { state: 'completed', run: completed };
  return same[0] ? { state: 'failed', run: same[0] } : null;
}

async function openRunWithKey(client: Client, taskQueue: string, key: string): Promise<SameRun | null> {
  const query = `WorkflowType = "benchmarkRun" AND ExecutionStatus = "Running" AND TaskQueue = "${taskQueue}"`;
  for await (const wf of client.workflow.list({ query })) {
    if (wf.memo?.runKey === key)
      return { state: 'open', runId: wf.workflowId, startedAt: wf.startTime?.toISOString() ?? null };
  }
  return null;
}

/**
 * Runs still open on this task queue that were started by an attached `judgeflow run` (memo `attached`): such a run
 * has no `judgeflow worker` of its own, so when the process that started it is gone, the processes still polling
 * the queue are all it has.
 */
export async function openAttachedRuns(client: Client, taskQueue: string, except: string): Promise<string[]> {
  const query = `WorkflowType = "benchmarkRun" AND ExecutionStatus = "Running" AND TaskQueue = "${taskQueue}"`;
  const ids: string[] = [];
  for await (const wf of client.workflow.list({ query }))
    if (wf.workflowId !== except && wf.memo?.attached === true) ids.push(wf.workflowId);
  return ids;
}
