import { isCancellation, log, patched, proxyActivities, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import { condition } from '@temporalio/workflow';
import type { BenchmarkActivities } from '../activities';
import type { BatchResult } from '../activities/batches';
import { copilotCallOptions } from './llmCalls';
import { Limiter, type Ticket } from './pool';
import { batchOptions, batchSize, CallTimes } from './batches';
import type { CallOutcome, SendSlot, BenchmarkRunInput, CopilotLimits, JudgeLimits, PipelineState, PreparedRun, Progress } from './types';

/** Queries handed to one planReadyJudging step at most (a re-judge or a CSV import makes every query ready at once). */
const READY_BATCH = 200;
/** How far ahead a paced start may be taken (see `aheadMs` below). */
const SEND_AHEAD_MS = 1_000;

const { planPipeline, planReadyJudging, importAnswers, recordCollectFailure, recordJudgeFailure } = proxyActivities<BenchmarkActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['InputError'] },
});

/**
 * Collect and judge at once, with no stage barrier: every copilot's answers are asked for in its own pool, and as
 * answers are stored the protocol says which judge units they make ready (planReadyJudging); those are judged in the
 * judge's pool straight away. Each endpoint (each copilot, the judge) has one adaptive Limiter held here, so its limits
 * hold across every worker. When Temporal suggests continuing as new, no new call starts; once the calls in flight are
 * done the state to carry over is returned (undefined when the run's collecting and judging are finished).
 */
export async function runPipeline(args: { input: BenchmarkRunInput; prepared: PreparedRun; progress: Progress; state?: PipelineState }): Promise<PipelineState | undefined> {
  const { input, prepared, progress } = args;
  const { runId, config } = input;
  const queryIds = prepared.queryIds;
  const plan = args.state?.plan ?? (await planPipeline({ runId }));
  const state: PipelineState = args.state ?? {
    plan,
    nextQuery: {},
    answersImported: false,
    planned: 0,
    nextItems: [],
    collect: { done: 0, total: queryIds.length * (plan.live.length + plan.imports.flat().length), failures: 0 },
    judge: { done: 0, total: 0, failures: 0 },
    limits: {},
  };
  progress.stages = { collect: state.collect, judge: state.judge };

  let stopping = false;
  const stop = () => (stopping ||= workflowInfo().continueAsNewSuggested);
  let collecting = true;
  let readinessDone = false;
  const refresh = () => {
    const stage = collecting && state.collect.total > state.collect.done ? state.collect : state.judge;
    Object.assign(progress, { stage: stage === state.collect ? 'collect' : 'judge', done: stage.done, total: stage.total, failures: state.collect.failures + state.judge.failures });
  };
  refresh();

  // Queries with answers the readiness step has not seen yet, in arrival order.
  const pending: string[] = [];
  const pendingSet = new Set<string>();
  const answered = (queryId: string) => {
    if (pendingSet.has(queryId)) return;
    pendingSet.add(queryId);
    pending.push(queryId);
  };

  const limiters = new Map<string, Limiter>();
  // Runs started before starts were paced keep the earlier limiter rules, so their histories replay. Paced, a start due
  // within a second is taken at once and the activity sends its call at that time (`send`): the server's timers may
  // fire most of a second late, which would otherwise set the pace whenever no other call wakes the workflow.
  const paced = patched('adaptive-pacing');
  const aheadMs = paced ? SEND_AHEAD_MS : 0;
  const sendSlot = (endpoint: string, ticket: Ticket): { send?: SendSlot } =>
    ticket.startedAt > Date.now() || ticket.spacingMs ? { send: { at: ticket.startedAt, spacingMs: ticket.spacingMs, endpoint } } : {};
  const limiterOf = (key: string, options: ConstructorParameters<typeof Limiter>[0]) => {
    let limiter = limiters.get(key);
    if (!limiter) limiters.set(key, (limiter = new Limiter({ ...options, paced }, state.limits[key])));
    return limiter;
  };

  // Runs started before batching ask one item per activity, so their histories replay.
  const batched = patched('batched-calls');
  const callTimes = new CallTimes();
  /** Items for a start just taken: one, unless only the endpoint's window limits it now (see batchSize). */
  const sizeOf = (limiter: Limiter, ticket: Ticket, endpoint: string, remaining: number) =>
    batched && !sendSlot(endpoint, ticket).send && limiter.windowOnly(Date.now()) ? batchSize({ remaining, allowed: limiter.allowed, callMs: callTimes.of(endpoint) }) : 1;
  /**
   * One item in its own activity (`call`), attempt after attempt: a throttled call is asked again within the (now
   * smaller) window, even while stopping (it has started). Its result, or the error once every attempt failed; a
   * cancelled run's cancellation is thrown (a cancelled run records nothing more).
   */
  async function alone<R extends { outcome: CallOutcome }>(
    limiter: Limiter,
    ticket: Ticket | null,
    endpoint: string,
    call: (attempt: number, slot: { send?: SendSlot }) => Promise<R>,
    throttled: (result: R) => boolean,
  ): Promise<{ result: R } | { error: unknown }> {
    let held: Ticket | null = ticket ?? (await limiter.acquire(() => false, aheadMs));
    try {
      for (let attempt = 1; ; attempt++) {
        const began = Date.now();
        const result = await call(attempt, sendSlot(endpoint, held!));
        limiter.release(held!, result.outcome);
        held = null;
        if (!throttled(result)) {
          callTimes.note(endpoint, Date.now() - began, 1);
          return { result };
        }
        held = await limiter.acquire(() => false, aheadMs);
      }
    } catch (error) {
      if (held) limiter.release(held, {});
      if (isCancellation(error)) throw error;
      return { error };
    }
  }
  /**
   * One start carrying several items (`call`, one activity): what it finished is counted (`done`), its ticket goes back
   * with what the endpoint said, and each item it did not finish (a throttle, an error, a batch that failed for good)
   * is asked again on its own (`one`), with that item's own attempts.
   */
  async function inBatch<K, R>(limiter: Limiter, ticket: Ticket, endpoint: string, keys: K[], call: (keys: K[]) => Promise<BatchResult<R>>, done: (result: R, key: K) => void, one: (key: K) => Promise<void>): Promise<void> {
    const began = Date.now();
    let finished = 0;
    try {
      const result = await call(keys);
      releaseBatch(limiter, ticket, result);
      result.results.forEach((r, i) => done(r, keys[i]));
      finished = result.results.length;
      if (!result.stoppedBy) callTimes.note(endpoint, Date.now() - began, keys.length);
    } catch (error) {
      limiter.release(ticket, {});
      if (isCancellation(error)) throw error;
    }
    for (const key of keys.slice(finished)) await one(key);
  }
  /** Work started in the background: its failure is observed at once (an unobserved rejection would fail every workflow task), and it is awaited at the end. */
  const track = (running: Set<Promise<void>>, work: Promise<void>) => {
    work.catch(() => undefined);
    running.add(work);
    void work.finally(() => running.delete(work)).catch(() => undefined);
  };

  async function importAll(): Promise<void> {
    if (state.answersImported) return;
    if (plan.answered) queryIds.forEach(answered);
    await Promise.all(
      plan.imports.map(async (copilots) => {
        const counts = await importAnswers({ runId, copilots });
        state.collect.done += counts.ok + counts.failed;
        state.collect.failures += counts.failed;
        queryIds.forEach(answered);
        refresh();
      }),
    );
    state.answersImported = true;
  }

  async function collectCopilot(copilot: CopilotLimits): Promise<void> {
    const endpoint = `copilot:${copilot.name}`;
    const limiter = limiterOf(endpoint, { concurrency: copilot.concurrency, requestsPerMinute: copilot.requestsPerMinute, tokensPerMinute: copilot.tokensPerMinute });
    const options = copilotCallOptions(copilot);
    const { collectAnswer } = proxyActivities<BenchmarkActivities>(options);
    const counted = (queryId: string, ok: boolean) => {
      state.collect.done++;
      if (!ok) state.collect.failures++;
      answered(queryId);
      refresh();
    };

    /** One query in its own activity; when every attempt failed, the failure is recorded and the run goes on. */
    async function askOne(queryId: string, ticket: Ticket | null): Promise<void> {
      const asked = await alone(
        limiter,
        ticket,
        endpoint,
        (attempt, slot) => collectAnswer({ runId, queryId, copilot: copilot.name, attempt, maxAttempts: copilot.retry.maxAttempts, ...slot }),
        (result) => result.status === 'throttled',
      );
      if ('error' in asked) {
        // Even a copilot that breaks every attempt must not lose the rest of the run.
        log.warn('collection failed for good', { queryId, copilot: copilot.name });
        await recordCollectFailure({ runId, queryId, copilot: copilot.name, reason: rootCause(asked.error) });
      }
      counted(queryId, 'result' in asked && asked.result.status === 'ok');
    }

    /** Several queries in one activity; those it did not finish (a throttle, an error) are asked one by one. */
    const askMany = (batch: string[], ticket: Ticket) =>
      inBatch(
        limiter,
        ticket,
        endpoint,
        batch,
        (queryIds) => proxyActivities<BenchmarkActivities>(batchOptions(options, queryIds.length)).collectAnswers({ runId, copilot: copilot.name, queryIds }),
        (result, queryId) => counted(queryId, result.status === 'ok'),
        (queryId) => askOne(queryId, null),
      );

    const running = new Set<Promise<void>>();
    for (;;) {
      const position = state.nextQuery[copilot.name] ?? 0;
      if (position >= queryIds.length) break;
      const ticket = await limiter.acquire(stop, aheadMs);
      if (!ticket) break;
      const size = sizeOf(limiter, ticket, endpoint, queryIds.length - position);
      const batch = queryIds.slice(position, position + size);
      state.nextQuery[copilot.name] = position + batch.length;
      track(running, batch.length > 1 ? askMany(batch, ticket) : askOne(batch[0], ticket));
    }
    await Promise.all(running);
  }

  /** Judge work items planned but not started yet for one judge of the panel (item i belongs to judges[i mod n]). */
  const unstarted = (lane: number) => Math.ceil(Math.max(0, state.planned - (state.nextItems[lane] ?? lane)) / judges.length);

  async function planReady(): Promise<void> {
    // Plan once a judge is about to run out of work (under two windows of items left), not after every answer: the
    // answers that arrived meanwhile are planned in one step, so fewer activities and workflow tasks compete with the calls.
    const whenNeeded = patched('pipeline-plan-ready-when-needed');
    const needed = () => !whenNeeded || judges.some((judge, lane) => unstarted(lane) < 2 * judge.concurrency);
    for (;;) {
      await condition(() => (pending.length > 0 && needed()) || !collecting);
      if (!pending.length) break;
      const batch = pending.splice(0, READY_BATCH);
      batch.forEach((q) => pendingSet.delete(q));
      state.planned = (await planReadyJudging({ runId, queryIds: batch })).planned;
      state.judge.total = state.planned;
      refresh();
    }
    readinessDone = true;
  }

  // A panel: work item i belongs to judges[i mod judges.length] (planReadyJudging appends whole units × samples × judges),
  // and each judge works through its own items within its own limits.
  const judges: JudgeLimits[] = config.judges?.length ? config.judges : [config.judge!];

  async function judgeAll(lane: number): Promise<void> {
    const judge = judges[lane];
    const next = () => state.nextItems[lane] ?? lane;
    const endpoint = judges.length > 1 ? `judge:${lane}` : 'judge';
    const limiter = limiterOf(endpoint, { concurrency: judge.concurrency, requestsPerMinute: judge.requestsPerMinute, tokensPerMinute: judge.tokensPerMinute });
    const options: ActivityOptions & { startToCloseTimeout: number } = {
      // The largest possible unit's worst case (planPipeline). A dead worker is caught by the heartbeat timeout.
      startToCloseTimeout: plan.unitTimeoutMs,
      heartbeatTimeout: '10 seconds',
      // Long enough to ride out a judge outage (429s come back to this workflow's limiter instead); 4xx are not retried.
      retry: { maximumAttempts: judge.maxAttempts, initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
    };
    const { judgeWork } = proxyActivities<BenchmarkActivities>(options);
    const counted = (result: { judged: number; failed: number } | 'failed') => {
      const outcome = result === 'failed' || result.failed > 0 ? 'failed' : result.judged > 0 ? 'done' : 'none';
      if (outcome !== 'none') state.judge.done++;
      if (outcome === 'failed') state.judge.failures++;
      refresh();
    };

    /** One item in its own activity; when every attempt failed, its judgments are recorded as failed. */
    async function judgeOne(index: number, ticket: Ticket | null): Promise<void> {
      const judged = await alone(
        limiter,
        ticket,
        endpoint,
        (attempt, slot) => judgeWork({ runId, index, attempt, maxAttempts: judge.maxAttempts, ...slot }),
        (result) => result.throttled,
      );
      if ('result' in judged) return counted(judged.result);
      await recordJudgeFailure({ runId, index, reason: rootCause(judged.error) });
      counted('failed');
    }

    /** Several items in one activity; those it did not finish (a throttle, an error) are judged one by one. */
    const judgeMany = (indices: number[], ticket: Ticket) =>
      inBatch(
        limiter,
        ticket,
        endpoint,
        indices,
        (batch) => proxyActivities<BenchmarkActivities>(batchOptions(options, batch.length)).judgeWorkItems({ runId, indices: batch }),
        (result) => counted(result),
        (index) => judgeOne(index, null),
      );

    const running = new Set<Promise<void>>();
    for (;;) {
      await condition(() => stop() || next() < state.planned || readinessDone);
      if (next() >= state.planned) {
        if (readinessDone || stopping) break;
        continue;
      }
      const ticket = await limiter.acquire(stop, aheadMs);
      if (!ticket) break;
      const index = next();
      const size = sizeOf(limiter, ticket, endpoint, unstarted(lane));
      const indices = Array.from({ length: size }, (_, k) => index + k * judges.length);
      state.nextItems[lane] = index + size * judges.length;
      track(running, size > 1 ? judgeMany(indices, ticket) : judgeOne(index, ticket));
    }
    await Promise.all(running);
  }

  const collection = (async () => {
    await Promise.all([importAll(), ...config.copilots.filter((c) => plan.live.includes(c.name)).map(collectCopilot)]);
    collecting = false;
    refresh();
  })();
  await Promise.all([collection, planReady(), ...judges.map((_, lane) => judgeAll(lane))]);

  const judged = judges.every((_, lane) => (state.nextItems[lane] ?? lane) >= state.planned);
  const finished = state.answersImported && plan.live.every((c) => (state.nextQuery[c] ?? 0) >= queryIds.length) && judged;
  if (finished) return undefined;
  for (const [key, limiter] of limiters) state.limits[key] = limiter.state();
  return state;
}

/** "Activity task failed" says nothing; the innermost cause says why. */
export function rootCause(error: unknown): string {
  let e = error as { message?: string; cause?: unknown } | undefined;
  while (e && typeof e === 'object' && e.cause) e = e.cause as typeof e;
  return e?.message ?? String(error);
}

/**
 * A batch is back: its later calls count as starts, and its ticket goes back with what the endpoint said (a throttle
 * as of the call it stopped at).
 */
function releaseBatch(limiter: Limiter, ticket: Ticket, batch: { sentAt: number[]; outcome: CallOutcome }): void {
  limiter.noteStarts(batch.sentAt.slice(1));
  limiter.release(batch.outcome.throttled && batch.sentAt.length ? { startedAt: batch.sentAt[batch.sentAt.length - 1] } : ticket, batch.outcome);
}
