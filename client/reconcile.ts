import type { Client } from '@temporalio/client';
import { temporalClient } from './temporalSdk';
import type { ResultsStore } from '../core/model/store';

/** Temporal states in which a run's workflow has ended without its code recording the end (it could not run any more). */
const ENDED_FROM_OUTSIDE = new Set(['TERMINATED', 'TIMED_OUT', 'CANCELLED', 'FAILED']);

/**
 * A run the store still calls `running` whose workflow Temporal has closed (terminated, timed out, or cancelled/failed
 * with no worker left to record it) is recorded as failed with the reason, so `runs`, `status` and `rejudge` tell the
 * truth. Temporal is the source of truth for whether a run is open. Returns the reason when it reconciled the run.
 */
export async function reconcileRun(client: Client, store: ResultsStore, runId: string): Promise<string | null> {
  const stored = await store.getRun(runId);
  if (!stored || stored.status !== 'running') return null;
  let description;
  try {
    description = await client.workflow.getHandle(runId).describe();
  } catch (error) {
    if (error instanceof temporalClient().WorkflowNotFoundError) return null; // e.g. another Temporal server: nothing to learn here
    throw error;
  }
  const state = description.status.name;
  if (!ENDED_FROM_OUTSIDE.has(state)) return null;
  const reason = await closeReason(client, runId, state);
  await store.finishRun(runId, 'failed', null, { error: reason }, (description.closeTime ?? new Date()).toISOString());
  return reason;
}

/** Why Temporal closed the workflow, from the last event of its history (e.g. the reason given to terminate). */
async function closeReason(client: Client, runId: string, state: string): Promise<string> {
  const history = await client.workflow.getHandle(runId).fetchHistory();
  const last = history.events?.[history.events.length - 1];
  const terminated = last?.workflowExecutionTerminatedEventAttributes;
  if (terminated) return `terminated in Temporal${terminated.reason ? `: ${terminated.reason}` : ' (no reason given)'}`;
  if (last?.workflowExecutionTimedOutEventAttributes) return 'timed out in Temporal (workflow execution timeout)';
  const failed = last?.workflowExecutionFailedEventAttributes?.failure;
  if (failed) return `failed: ${failed.cause?.message ?? failed.message ?? 'unknown failure'}`;
  return state === 'CANCELLED' ? 'cancelled' : `ended in Temporal as ${state.toLowerCase()}`;
}
