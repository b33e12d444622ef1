import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { Budget, LimitName, Progress, ResumeRequest, RunControl, Spend, TuneRequest } from './run';

/**
 * A benchmark run's messages: the queries and updates the client sends and the workflow answers (names are the wire
 * protocol: never rename one a running workflow answers). Definitions only, safe in the workflow sandbox.
 */

/** Where the run stands (judgeflow status, the view server, the CLI's progress bar). */
export const progressQuery = defineQuery<Progress>('progress');
export const pauseUpdate = defineUpdate<RunControl, [{ reason?: string }]>('pause');
export const resumeUpdate = defineUpdate<RunControl, [ResumeRequest]>('resume');
/** The run's controls as they stand (status --json shows the history and the tuned limits). */
export const controlQuery = defineQuery<RunControl>('control');
/** Whether the run is paused, for an activity that asks several items in a row (activities/itemGroup.ts). */
export const heldQuery = defineQuery<boolean>('held');
/**
 * How old an answer of the `held` query may be when a batch relies on it. Asked before every item, the query (a round
 * trip through the Temporal server to the workflow's worker, tens of milliseconds) cost a rate-bound copilot of short
 * calls about a tenth of its rate; one answer is now shared, for this long, by every batch of the run in this worker.
 * The price: a call may start up to this long after a pause is recorded (docs/cost-and-control.md, the overshoot bound).
 */
export const HELD_FRESH_MS = 250;

/** The limits `judgeflow tune` may change. */
export const LIMIT_NAMES: LimitName[] = ['concurrency', 'requestsPerMinute', 'tokensPerMinute'];
export const tuneUpdate = defineUpdate<RunControl, [TuneRequest]>('tune');

/** What the spend says of calls reported without usage: how many are estimated, how many not counted. */
export function unreported(spent: Spend): string {
  const estimated = spent.callsEstimated ?? 0;
  const uncounted = spent.callsWithoutUsage - estimated;
  const parts = [
    estimated ? `${estimated} call(s) reported no usage and are estimated from their request and reply size` : '',
    uncounted ? `${uncounted} call(s) reported no usage and are not counted` : '',
  ].filter(Boolean);
  return parts.length ? ` (${parts.join('; ')})` : '';
}

/** "$0.5 and 20000 tokens", or "none". */
export const describeBudget = (budget: Budget | undefined) =>
  [
    ...(budget?.usd !== undefined ? [`$${budget.usd}`] : []),
    ...(budget?.tokens !== undefined ? [`${budget.tokens} tokens`] : []),
  ].join(' and ') || 'none';
