import { log, patched, proxyActivities, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { BenchmarkActivities } from '../activities';
import { copilotCallOptions } from './llmCalls';
import { EndpointLane } from './endpointLane';
import { JudgePlanner, judgeWorkFrom } from './judgePlanner';
import { batchOptions, SHARE_BATCH } from './limits/itemGroupSize';
import { Limiter } from './limits/limiter';
import { Breaker, failFastFrom } from './breaker';
import { pause, watchBudget } from './runControl';
import { type RunControl } from '../contract/run';
import { limitsOf, type LaneSlot } from './retune';
import { initialBatchState, judgeInBatches } from './batchJudging';
import { QueryPages } from './queryPages';
import { historyFull } from './historyLimit';
import type {
  BenchmarkRunInput,
  CallOutcome,
  CopilotLimits,
  ItemFailure,
  JudgeLimits,
  PreparedRun,
  Progress,
  RunPlan,
  RunState,
  WorkflowRunConfig,
} from '../contract/run';
import { rootCause } from '../contract/errors';
export { rootCause } from '../contract/errors';

const { planRun, planReadyJudgeWork, importAnswers, recordAnswerFailure, recordJudgeFailure, snapshotQueryIds } =
  proxyActivities<BenchmarkActivities>({
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '1 minute',
    retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['InputError'] },
  });

/** What every part of one history of the collect-and-judge stage shares. */
interface StageContext {
  runId: string;
  /** The snapshot's queries, read a page at a time (workflows/queryPages.ts). */
  queries: QueryPages;
  state: RunState;
  planner: JudgePlanner;
  /** Adaptive limits per endpoint, from the state carried over (see workflows/limits/limiter.ts). */
  limiters: Map<string, Limiter>;
  /** Each endpoint's breaker, by limiter key (resume --config starts a changed endpoint's afresh). */
  breakers: Map<string, Breaker>;
  control: RunControl;
  /** The workflow input's config: resume --config replaces its endpoint settings in place. */
  config: WorkflowRunConfig;
  /** True once the history is long enough to continue as new (workflows/historyLimit.ts): no new call starts. */
  stop: () => boolean;
  /** True while the run is paused (workflows/runControl.ts). */
  held: () => boolean;
  /** Items finished (answered, judged or failed) in this history: the budget watch looks again every window of them. */
  finished: { count: number };
  /** An endpoint's item ended (with its failure, if it failed): its breaker may pause the run (workflows/breaker.ts). */
  ended: (breaker: Breaker, failure: ItemFailure | undefined) => void;
  refresh: () => void;
  progress: Progress;
}

/**
 * Collect and judge at once, with no stage barrier: every live copilot's queries go through its own endpoint lane, and
 * as answers are stored the planner makes the judge work they make ready, which each judge's lane starts straight
 * away. The lanes' limiters are held here, so each endpoint's limits hold across every worker. Once the history is long
 * enough to continue as new (workflows/historyLimit.ts), no new call starts; once the calls in flight are done the
 * state to carry over is returned (undefined when the run's collecting and judging are finished).
 */
export async function collectAndJudge(args: {
  input: BenchmarkRunInput;
  prepared: PreparedRun;
  progress: Progress;
  state?: RunState;
  control: RunControl;
  slot: LaneSlot;
}): Promise<RunState | undefined> {
  const { input, prepared, progress } = args;
  const judges: JudgeLimits[] = input.config.judges?.length ? input.config.judges : [input.config.judge!];
  const fresh = !args.state;
  const queries = QueryPages.of(prepared, (offset, limit) =>
    snapshotQueryIds({ snapshotId: prepared.snapshotId, offset, limit }),
  );
  const state = args.state ?? (await firstState(input, queries, judges.length));
  // Read by the progress (collecting) and by every lane (stopping): one object both the stage and this function change.
  const flags = { collecting: true, stopping: false };
  // Kept by the planner by reference: a tune of a judge's concurrency changes it in place (workflows/runControl.ts).
  const judgeConcurrencies = judges.map(
    (j, lane) => limitsOf(args.control, judges.length > 1 ? `judge:${lane}` : 'judge', j).concurrency,
  );
  const stage = newStage(args, queries, state, judgeConcurrencies, flags);
  progress.stages = { collect: state.collect, judge: state.judge };
  // Resumed from the store: answers held already still need their judge work planned (work planned before is kept).
  if (fresh)
    for (const queryId of new Set(Object.values(state.plan.stored?.answered ?? {}).flat()))
      stage.planner.answered(queryId);
  stage.refresh();

  const live = input.config.copilots.filter((c) => state.plan.live.includes(c.name));
  args.slot.lanes = {
    runId: input.runId,
    config: input.config,
    live: state.plan.live,
    limiters: stage.limiters,
    breakers: stage.breakers,
    judgeConcurrencies,
  };
  const collection = (async () => {
    await Promise.all([importAll(stage), ...live.map((copilot) => collectCopilot(stage, copilot))]);
    flags.collecting = false;
    stage.refresh();
  })();
  let lanesDone = false;
  const lanes = Promise.all([
    collection,
    stage.planner.run(() => flags.collecting),
    ...judges.map((judge, lane) => judgeLane(stage, judge, lane, judges.length)),
  ]).finally(() => (lanesDone = true));
  // The budget is looked at again once every endpoint's window of items has finished (or every few seconds).
  const window = live.reduce((n, c) => n + c.concurrency, 0) + judges.reduce((n, j) => n + j.concurrency, 0);
  // Also without a budget: one given by `resume --budget-usd` is watched from then on.
  await Promise.all([lanes, watchBudget(input.runId, args.control, () => lanesDone, stage.finished, window)]);

  return carriedState(stage, live, judges);
}

/** Undefined when the run's collecting and judging are finished; otherwise the state continue-as-new carries over. */
function carriedState(stage: StageContext, live: Array<{ name: string }>, judges: JudgeLimits[]): RunState | undefined {
  const { state } = stage;
  const finished =
    state.answersImported &&
    live.every((c) => (state.nextQuery[c.name] ?? 0) >= queueOf(stage, c.name).length) &&
    judges.every((_, lane) => stage.planner.unstarted(lane) === 0) &&
    batchesDone(state);
  if (finished) return undefined;
  for (const [key, limiter] of stage.limiters) state.limits[key] = limiter.state();
  return state;
}

/** The stage's shared context: what every lane of this execution reads and changes. */
function newStage(
  args: { input: BenchmarkRunInput; progress: Progress; control: RunControl },
  queries: QueryPages,
  state: RunState,
  judgeConcurrencies: number[],
  flags: { collecting: boolean; stopping: boolean },
): StageContext {
  const { input, progress } = args;
  // Histories recorded before the patch continued as new when the server suggested it (about 4,000 events).
  const ownLimit = patched('continue-as-new-at-own-limit');
  return {
    runId: input.runId,
    queries,
    state,
    limiters: new Map(),
    breakers: new Map(),
    control: args.control,
    config: input.config,
    planner: new JudgePlanner(
      state.judgeWork,
      judgeConcurrencies,
      async (queryIds) => (await planReadyJudgeWork({ runId: input.runId, queryIds })).planned,
      state.judge,
    ),
    stop: () => (flags.stopping ||= ownLimit ? historyFull(workflowInfo()) : workflowInfo().continueAsNewSuggested),
    held: () => args.control.paused !== null,
    finished: { count: 0 },
    ended: (breaker, failure) => {
      const reason = breaker.observe(failure);
      if (reason) pause(args.control, reason, 'breaker');
    },
    refresh: () => showProgress(progress, state, flags.collecting),
    progress,
  };
}

/** The state of a run's first history: its plan, and (resumed from the store) the queries each copilot has left. */
async function firstState(input: BenchmarkRunInput, queries: QueryPages, judges: number): Promise<RunState> {
  const plan = await planRun({ runId: input.runId, resumeFromStore: input.resumeFromStore });
  // Held already (an older run's carried ids), they are taken without a step: its recorded history has none.
  const ids = !plan.stored ? [] : queries.complete ? queries.slice(0, queries.length) : await queries.all();
  return initialState(plan, ids, queries.length, judges);
}

function initialState(plan: RunPlan, queryIds: string[], queryCount: number, judges: number): RunState {
  const stored = plan.stored;
  const toAsk =
    stored &&
    Object.fromEntries(
      plan.live.map((c) => {
        const answered = new Set(stored.answered[c]);
        return [c, queryIds.filter((q) => !answered.has(q))];
      }),
    );
  const answeredBefore = stored ? Object.values(stored.answered).reduce((n, qs) => n + qs.length, 0) : 0;
  const judgedBefore = stored ? stored.planned - stored.unjudged.length : 0;
  return {
    plan,
    nextQuery: {},
    ...(toAsk ? { toAsk } : {}),
    answersImported: false,
    judgeWork: judgeWorkFrom(judges, stored),
    collect: {
      done: answeredBefore,
      total: queryCount * (plan.live.length + plan.imports.flat().length),
      failures: stored?.answersFailed ?? 0,
    },
    judge: { done: judgedBefore, total: stored?.planned ?? 0, failures: stored?.judgedFailed ?? 0 },
    limits: {},
  };
}

/** The headline: the stage still running (collect while answers are due, then judge), failures over both. */
function showProgress(progress: Progress, state: RunState, collecting: boolean): void {
  const stage = collecting && state.collect.total > state.collect.done ? state.collect : state.judge;
  Object.assign(progress, {
    stage: stage === state.collect ? 'collect' : 'judge',
    done: stage.done,
    total: stage.total,
    failures: state.collect.failures + state.judge.failures,
  });
}

/** An endpoint's breaker, under the run's `failFast` (workflows/breaker.ts). */
function breakerOf(stage: StageContext, endpoint: string, who: string): Breaker {
  const breaker = new Breaker(who, failFastFrom(stage.config.failFast));
  stage.breakers.set(endpoint, breaker);
  return breaker;
}

/** A budgeted run's batches stay small, so the budget's look at the spend sees items as they finish (EndpointLane). */
const batchCap = (stage: StageContext) => (stage.control.budget ? SHARE_BATCH : Infinity);

/** An endpoint's limiter, at the config's limits or those `judgeflow tune` set (carried in the run's controls). */
function limiterOf(
  stage: StageContext,
  endpoint: string,
  limits: { concurrency: number; requestsPerMinute?: number; tokensPerMinute?: number },
): Limiter {
  let limiter = stage.limiters.get(endpoint);
  const { concurrency, requestsPerMinute, tokensPerMinute } = limits;
  if (!limiter)
    stage.limiters.set(
      endpoint,
      (limiter = new Limiter(
        limitsOf(stage.control, endpoint, { concurrency, requestsPerMinute, tokensPerMinute }),
        stage.state.limits[endpoint],
      )),
    );
  return limiter;
}

/** The queries a live copilot is asked, in order (a run resumed from the store: those it holds no answer to). */
function queueOf(stage: StageContext, copilot: string): QueryPages {
  const toAsk = stage.state.toAsk?.[copilot];
  return toAsk ? QueryPages.held(toAsk) : stage.queries;
}

/**
 * The snapshot's first queries, whose held answers are imported (every source's) before the rest: their judge work
 * starts while the rest are read. Two rounds of a judge's usual concurrency; a protocol judging a query's answers
 * together (LATTICE joint, CAB) can start a query only once every source's answer to it is stored.
 */
export const FIRST_IMPORT_QUERIES = 48;

/**
 * Answers held already (CSV and JSON copilots, a re-judge's adopted answers): stored in one step per source, then
 * planned. With many queries, every source's first FIRST_IMPORT_QUERIES go first, then the rest.
 */
async function importAll(stage: StageContext): Promise<void> {
  const { state, runId, queries, planner } = stage;
  if (state.answersImported) return;
  const wanted = state.plan.answered || state.plan.imports.length > 0;
  // Held already (an older run's carried ids), they are taken without a step: its recorded history has none.
  const queryIds = !wanted ? [] : queries.complete ? queries.slice(0, queries.length) : await queries.all();
  if (state.plan.answered) queryIds.forEach((q) => planner.answered(q));
  const importPage = (page?: { from: number; to: number }) =>
    Promise.all(
      state.plan.imports.map(async (copilots) => {
        const counts = await importAnswers({ runId, copilots, ...(page ? { queries: page } : {}) });
        state.collect.done += counts.ok + counts.failed;
        state.collect.failures += counts.failed;
        (page ? queryIds.slice(page.from, page.to) : queryIds).forEach((q) => planner.answered(q));
        stage.refresh();
      }),
    );
  const paged = state.plan.imports.length > 0 && queryIds.length > FIRST_IMPORT_QUERIES;
  if (paged && patched('import-first-queries-first')) {
    await importPage({ from: 0, to: FIRST_IMPORT_QUERIES });
    await importPage({ from: FIRST_IMPORT_QUERIES, to: queryIds.length });
  } else await importPage();
  state.answersImported = true;
}

/** One live copilot's queries through its lane; each answer (or failure for good) goes to the planner. */
async function collectCopilot(stage: StageContext, copilot: CopilotLimits): Promise<void> {
  const { runId, state } = stage;
  const endpoint = `copilot:${copilot.name}`;
  // Its timeouts and retry as the config says now (resume --config may replace them).
  const current = () => stage.config.copilots.find((c) => c.name === copilot.name) ?? copilot;
  const breaker = breakerOf(stage, endpoint, `copilot ${copilot.name}`);
  const lane = new EndpointLane(
    endpoint,
    limiterOf(stage, endpoint, copilot),
    {
      one: (queryId: string, attempt, slot) =>
        proxyActivities<BenchmarkActivities>(copilotCallOptions(current())).askCopilot({
          runId,
          queryId,
          copilot: copilot.name,
          attempt,
          maxAttempts: current().retry.maxAttempts,
          ...slot,
        }),
      many: (queryIds) =>
        proxyActivities<BenchmarkActivities>(
          batchOptions(copilotCallOptions(current()), queryIds.length),
        ).askCopilotBatch({ runId, copilot: copilot.name, queryIds }),
      throttled: (result) => result.status === 'throttled',
      outcome: (result) => (result.status === 'ok' ? 'done' : 'failed'),
      failureOf: (result) => result.failure,
      async recordFailure(queryId, error) {
        log.warn('collection failed for good', { queryId, copilot: copilot.name });
        await recordAnswerFailure({ runId, queryId, copilot: copilot.name, reason: rootCause(error) });
      },
      counted(queryId, _outcome, failure) {
        stage.finished.count++;
        stage.ended(breaker, failure);
        stage.planner.answered(queryId);
        stage.refresh();
      },
    },
    state.collect,
    stage.held,
    () => batchCap(stage),
  );
  const queue = queueOf(stage, copilot.name);
  const position = () => state.nextQuery[copilot.name] ?? 0;
  const source = queue.source(position, (taken) => (state.nextQuery[copilot.name] = position() + taken), stage.stop);
  // Every id held (an older run's carried ids, a resumed run's): nothing to read beside the lane.
  if (queue.complete) return lane.drain(source, stage.stop);
  await Promise.all([lane.drain(source, stage.stop), source.reading]);
}

/** One judge's work items (one judge, or lane `lane` of a panel of `judges`) through its lane, as the planner makes them. */
async function judgeLane(stage: StageContext, judge: JudgeLimits, lane: number, judges: number): Promise<void> {
  const { runId, state } = stage;
  const endpoint = judges > 1 ? `judge:${lane}` : 'judge';
  const options: ActivityOptions & { startToCloseTimeout: number } = {
    // The largest possible unit's worst case (planRun). A dead worker is caught by the heartbeat timeout.
    startToCloseTimeout: state.plan.unitTimeoutMs,
    heartbeatTimeout: '10 seconds',
    // Long enough to ride out a judge outage (429s come back to this workflow's limiter instead); 4xx are not retried.
    retry: {
      maximumAttempts: judge.maxAttempts,
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
    },
  };
  const { judgeItem } = proxyActivities<BenchmarkActivities>(options);
  const breaker = breakerOf(stage, endpoint, judges > 1 ? `judge ${judge.name ?? lane + 1}` : 'the judge');
  const endpointLane = new EndpointLane(
    endpoint,
    limiterOf(stage, endpoint, judge),
    {
      one: (index: number, attempt, slot) =>
        judgeItem({ runId, index, attempt, maxAttempts: judge.maxAttempts, ...slot }),
      many: (indices) =>
        proxyActivities<BenchmarkActivities>(batchOptions(options, indices.length)).judgeItems({ runId, indices }),
      throttled: (result) => result.throttled,
      outcome: (result) => (result.failed > 0 ? 'failed' : result.judged > 0 ? 'done' : 'none'),
      // Invalid answers after every re-ask come back as a result; the reasons are in the failed judgments.
      failureOf: (result) => (result.failed > 0 ? JUDGE_INVALID : undefined),
      recordFailure: (index, error) => recordJudgeFailure({ runId, index, reason: rootCause(error) }),
      counted: (_index, _outcome, failure) => {
        stage.finished.count++;
        stage.ended(breaker, failure);
        stage.refresh();
      },
    },
    state.judge,
    stage.held,
    () => batchCap(stage),
    true,
  );
  if (!judge.batch) return endpointLane.drain(stage.planner.source(lane), stage.stop);
  await judgeBatchesAndLive(stage, judge, endpoint, lane, endpointLane);
}

/**
 * A judge with `batch: true`: its items go through the provider's Batch API (workflows/batchJudging.ts), and those a
 * failed or expired line left are asked live through the judge's own lane and limits.
 */
async function judgeBatchesAndLive(
  stage: StageContext,
  judge: JudgeLimits,
  endpoint: string,
  lane: number,
  live: EndpointLane<number, { judged: number; failed: number; throttled: boolean; outcome: CallOutcome }>,
): Promise<void> {
  const { state, runId } = stage;
  const batch = ((state.batch ??= {})[endpoint] ??= initialBatchState());
  let batching = true;
  const showBatches = () => {
    stage.progress.batches = {
      ...stage.progress.batches,
      [endpoint]: { round: batch.round, batches: batch.batches, live: batch.live.length },
    };
  };
  const rounds = judgeInBatches({
    runId,
    endpoint,
    judge,
    source: stage.planner.source(lane),
    state: batch,
    held: stage.held,
    stop: stage.stop,
    control: stage.control,
    counted: (index, judged, failed) => live.finishedElsewhere(index, { judged, failed, throttled: false }),
    changed: showBatches,
  }).finally(() => (batching = false));
  await Promise.all([
    rounds,
    live.drain(
      { available: () => batch.live.length, take: (n) => batch.live.splice(0, n), closed: () => !batching },
      stage.stop,
    ),
  ]);
  showBatches();
}

/** Why a judged item failed: its answers stayed invalid (the reasons are in the failed judgments). */
const JUDGE_INVALID = {
  kind: 'judge_invalid_answer',
  message: 'its answers stayed invalid after every re-ask (the reasons are in results.csv)',
};

/** Nothing of a judge's batch judging is left: no item ready, waiting on a batch or to ask live. */
function batchesDone(state: RunState): boolean {
  return Object.values(state.batch ?? {}).every(
    (b) => !b.ready.length && !b.deferred.length && !b.waiting.length && !b.live.length,
  );
}
