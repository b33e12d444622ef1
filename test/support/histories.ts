import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON, type History } from '@temporalio/common/lib/proto-utils';

/** Recorded workflow histories replayed by test/workflows/replay.test.ts; refreshed by scripts/record-histories.ts. */
export const HISTORY_DIR = path.resolve(__dirname, '..', 'histories');

/** One scenario (a run: its parent workflow and every child) per file. */
export interface HistoryFile {
  scenario: string;
  description: string;
  recordedAt: string;
  sdk: string;
  workflows: Array<{
    workflowId: string;
    workflowType: string;
    history: unknown; /* proto JSON, as `temporal workflow show --output json` prints */
  }>;
}

export function readHistoryFiles(dir = HISTORY_DIR): Array<{ file: string; content: HistoryFile }> {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({
      file: path.join(dir, f),
      content: JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as HistoryFile,
    }));
}

export function replayInputs(file: HistoryFile): Array<{ workflowId: string; history: History }> {
  return file.workflows.map((w) => ({ workflowId: w.workflowId, history: historyFromJSON(w.history) }));
}

/**
 * Activities a run's histories scheduled (every run of its continue-as-new chain), with the work items each carried:
 * `queryId/copilot` for collection, `judge#index` for judge work (one for a single call, several for a batch), and
 * the activity's input as the workflow gave it.
 */
export async function scheduledActivities(
  client: import('@temporalio/client').Client,
  workflowId: string,
): Promise<Array<{ name: string; items: string[]; args: Record<string, unknown> }>> {
  const scheduled: Array<{ name: string; items: string[]; args: Record<string, unknown> }> = [];
  for await (const wf of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
    const history = await client.workflow.getHandle(workflowId, wf.runId).fetchHistory();
    for (const e of history.events ?? []) {
      const attrs = e.activityTaskScheduledEventAttributes;
      if (!attrs) continue;
      const data = attrs.input?.payloads?.[0]?.data;
      const args = data ? JSON.parse(Buffer.from(data).toString('utf8')) : {};
      const items: string[] = [
        ...(args.queryId && args.copilot ? [`${args.queryId}/${args.copilot}`] : []),
        ...(Array.isArray(args.queryIds) && args.copilot
          ? args.queryIds.map((q: string) => `${q}/${args.copilot}`)
          : []),
        ...(typeof args.index === 'number' ? [`judge#${args.index}`] : []),
        ...(Array.isArray(args.indices) ? args.indices.map((i: number) => `judge#${i}`) : []),
      ];
      scheduled.push({ name: attrs.activityType!.name!, items, args });
    }
  }
  return scheduled;
}
