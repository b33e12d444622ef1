import {
  CancellationScope,
  condition,
  isCancellation,
  proxyActivities,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { BenchmarkActivities } from '../activities';
import type { WorkSource } from './endpointLane';
import { noteSpend, pauseBeforeBatch } from './runControl';
import { type RunControl } from '../contract/run';
import type { BatchLaneState, JudgeLimits } from '../contract/run';

const { submitJudgeBatch, ingestJudgeBatch } = proxyActivities<BenchmarkActivities>({
  // Preparing a paper-scale round runs every item once against the store, then uploads its file: minutes, heartbeating.
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  // A provider outage at submit or download is waited out; a batch recorded with its id is never submitted again.
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    maximumAttempts: 20,
    nonRetryableErrorTypes: ['InputError'],
  },
});

const { runSpend } = proxyActivities<BenchmarkActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

const { pollJudgeBatch, cancelJudgeBatches } = proxyActivities<BenchmarkActivities>({
  // One status request; a failed poll is asked again at the next tick of the poll loop's timer.
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 10 },
});

/** Items a round waits for while answers still arrive; once planning is done a round takes whatever is ready. */
const ROUND_FILL = 1_000;

/** What the batch lane is told and tells back (its stage in workflows/collectAndJudge.ts). */
export interface BatchLane {
  runId: string;
  endpoint: string;
  judge: JudgeLimits;
  source: WorkSource<number>;
  state: BatchLaneState;
  held: () => boolean;
  stop: () => boolean;
  /** The run's controls: its budget sizes each round, and a round over it pauses the run. */
  control: RunControl;
  /** An item finished in a round (its verdicts stored, or failed for good). */
  counted: (index: number, judged: number, failed: number) => void;
  /** The batches' state changed (status shows it). */
  changed: () => void;
}

export const initialBatchState = (): BatchLaneState => ({
  round: 0,
  ready: [],
  deferred: [],
  waiting: [],
  live: [],
  batches: [],
});

/**
 * One judge's work through its provider's Batch API, round by round: a round runs its items until each needs a
 * request no batch has answered, submits those requests as batches, sleeps on a durable timer between polls, and
 * stores the results by custom_id; the next round runs the items again, answered from the results. Items whose line
 * failed or expired go to `state.live` (the judge's live lane asks them). Held while paused (a batch already submitted
 * keeps running at the provider); at `stop` the state is carried into the next history, polling where it was.
 */
export async function judgeInBatches(lane: BatchLane): Promise<void> {
  const { state: s } = lane;
  try {
    for (;;) {
      if (!s.waiting.length) {
        const next = await nextRound(lane);
        if (next === 'stop' || next === 'finished') return;
        const left = await budgetLeft(lane);
        if (lane.held()) {
          s.deferred = next; // paused at the cap by that look: the round waits for the resume
          continue;
        }
        await submitRound(lane, next, left);
        if (!s.waiting.length) continue; // every item finished or went live
      }
      if (!(await waitForBatches(lane))) return;
      for (const key of s.waiting) await ingestJudgeBatch({ runId: lane.runId, key, ...deadline(lane) });
      s.waiting = [];
    }
  } catch (error) {
    // A cancelled run's batches are cancelled at the provider too, so they stop costing.
    if (isCancellation(error) && s.waiting.length)
      await CancellationScope.nonCancellable(() => cancelJudgeBatches({ runId: lane.runId, keys: s.waiting }));
    throw error;
  }
}

/** The items of the next round: once enough are ready (or planning is done), and not while paused. */
async function nextRound(lane: BatchLane): Promise<number[] | 'stop' | 'finished'> {
  const { state: s, source } = lane;
  for (;;) {
    await condition(() => lane.stop() || source.available() > 0 || source.closed());
    // Taken at once, so the planner plans on (it plans while a judge is short of work).
    if (source.available() > 0) s.ready.push(...source.take(source.available()));
    if (lane.stop()) return 'stop';
    const planned = source.closed() && source.available() === 0;
    if (planned && !s.ready.length && !s.deferred.length) return 'finished';
    if (planned || s.ready.length >= ROUND_FILL) break;
  }
  if (lane.held()) await condition(() => !lane.held() || lane.stop());
  if (lane.stop()) return 'stop';
  const items = [...s.deferred, ...s.ready];
  s.deferred = [];
  s.ready = [];
  return items;
}

/**
 * With a budget, the spend is looked at just before a round (noteSpend: the cap pauses the run here), and what is left
 * of each cap sizes the round (activities/judgeBatch.ts prepareRound): a batch's price is known before it is submitted.
 */
async function budgetLeft(lane: BatchLane): Promise<{ usd?: number; tokens?: number } | undefined> {
  const { control } = lane;
  if (!control.budget) return undefined;
  noteSpend(control, await runSpend({ runId: lane.runId }));
  const { budget, spent } = control;
  if (!budget || !spent) return undefined;
  return {
    ...(budget.usd !== undefined ? { usd: Math.max(0, budget.usd - (spent.usd ?? 0)) } : {}),
    ...(budget.tokens !== undefined ? { tokens: Math.max(0, budget.tokens - spent.tokens) } : {}),
  };
}

async function submitRound(
  lane: BatchLane,
  items: number[],
  budget?: { usd?: number; tokens?: number },
): Promise<void> {
  const { state: s } = lane;
  s.round++;
  // Keys are unique to this run's chain of histories: a run resumed from the store (a new execution) never takes a key
  // an earlier execution's batch holds.
  const round = `${lane.endpoint}/${workflowInfo().firstExecutionRunId.slice(0, 8)}/${s.round}`;
  const result = await submitJudgeBatch({ runId: lane.runId, round, indices: items, ...(budget ? { budget } : {}) });
  // Not one item's lines fit what is left: the run pauses at its budget, saying what the next batch would cost.
  if (result.overBudget && !result.batches.length) pauseBeforeBatch(lane.control, result.overBudget);
  for (const item of result.done) lane.counted(item.index, item.judged, item.failed);
  s.live.push(...result.live);
  s.deferred = result.deferred;
  s.waiting = result.batches.map((b) => b.key);
  s.batches = result.batches.map((b) => ({
    key: b.key,
    batchId: null,
    lines: b.lines,
    state: 'submitted',
    ended: false,
    counts: { total: b.lines, succeeded: 0, failed: 0, pending: b.lines },
  }));
  lane.changed();
}

/** Poll the round's batches every `batchPollSeconds` until all ended (true), or until the run stops here (false). */
async function waitForBatches(lane: BatchLane): Promise<boolean> {
  const { state: s } = lane;
  const everyMs = (lane.judge.batchPollSeconds ?? 60) * 1_000;
  for (;;) {
    s.batches = await Promise.all(
      s.waiting.map((key) => pollJudgeBatch({ runId: lane.runId, key, ...deadline(lane) })),
    );
    lane.changed();
    if (s.batches.every((b) => b.ended)) return true;
    if (lane.stop()) return false;
    await sleep(everyMs);
  }
}

/** `judge.batchDeadlineHours`, when the config sets it (else the activities' default). */
const deadline = (lane: BatchLane) =>
  lane.judge.batchDeadlineHours !== undefined ? { deadlineHours: lane.judge.batchDeadlineHours } : {};
