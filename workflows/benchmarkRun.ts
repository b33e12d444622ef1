import { ApplicationFailure, CancellationScope, ContinueAsNew, continueAsNew, defineQuery, executeChild, isCancellation, log, patched, proxyActivities, setHandler } from '@temporalio/workflow';
import type { BenchmarkActivities } from '../activities';
import { copilotCallOptions } from './llmCalls';
import { runPipeline, rootCause } from './pipeline';
import { chunkRanges, runPool } from './pool';
import type { BenchmarkRunInput, ChunkResult, CollectChunkInput, JudgeChunkInput, Progress, RunResult } from './types';

export const progressQuery = defineQuery<Progress>('progress');

const { prepareRun, planJudging, writeReport, markRunFailed } = proxyActivities<BenchmarkActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['InputError'] },
});

/**
 * One benchmark run: load the query snapshot → collect every copilot's answers and judge each judge unit as soon as its
 * answers are in → aggregate and write the report. Collecting and judging run in this workflow's pools (workflows/pipeline.ts);
 * when its history grows long it continues as new, carrying where it stands. Large texts never enter this history:
 * activities keep them in the results store. Runs started before the pipeline (no `pipelined-run` marker) replay the
 * old shape: collect everything in child workflows of `chunkSize`, then judge in chunks.
 */
export async function benchmarkRun(input: BenchmarkRunInput): Promise<RunResult> {
  const { runId, config } = input;
  const progress: Progress = input.resume?.progress ?? { runId, stage: 'load', done: 0, total: 0, failures: 0, reportPath: null };
  setHandler(progressQuery, () => progress);
  const chunk = config.chunkSize;

  try {
    if (patched('pipelined-run')) {
      // 1. Load the snapshot, rubric and run record (or, when re-judging, adopt the source run's responses).
      const prepared = input.resume?.prepared ?? (await prepareRun(input));
      // 2 + 3. Collect and judge with no barrier between them.
      const pipeline = await runPipeline({ input, prepared, progress, state: input.resume?.pipeline });
      if (pipeline) await continueAsNew<typeof benchmarkRun>({ ...input, resume: { prepared, pipeline, progress } });
      return await report(runId, progress);
    }
    // 1. Load the snapshot, rubric and run record (or, when re-judging, adopt the source run's responses).
    const prepared = await prepareRun(input);

    // 2. Collect: copilots in parallel; each copilot's chunks one after another so its concurrency and rate limits hold across all workers.
    if (!input.sourceRunId) {
      progress.stage = 'collect';
      progress.total = prepared.queryIds.length * config.copilots.length;
      await Promise.all(
        config.copilots.map(async (copilot) => {
          for (const [from, to] of chunkRanges(prepared.queryIds.length, chunk)) {
            const result = await executeChild(collectChunk, {
              workflowId: childWorkflowId(`${runId}-collect-${copilot.name}-${from}`),
              args: [{ runId, copilot, queryIds: prepared.queryIds.slice(from, to) }],
            });
            tally(progress, result);
          }
        }),
      );
    }

    // 3. Judge: the protocol decides the units (one response, or one shared conversation per query).
    progress.stage = 'judge';
    const { units, unitTimeoutMs } = await planJudging({ runId });
    Object.assign(progress, { done: 0, total: units }); // failures stay cumulative across stages
    for (const [from, to] of chunkRanges(units, chunk)) {
      const limits = config.judges ? { judge: config.judges[0], judges: config.judges } : { judge: config.judge! };
      const result = await executeChild(judgeChunk, { workflowId: childWorkflowId(`${runId}-judge-${from}`), args: [{ runId, ...limits, from, to, unitTimeoutMs }] });
      tally(progress, result);
    }

    return await report(runId, progress);
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error; // the run goes on in its next history
    progress.stage = 'failed';
    // Even when the run was cancelled, the store must learn it ended.
    const reason = isCancellation(error) ? 'cancelled (judgeflow cancel, or from the Temporal UI)' : rootCause(error);
    await CancellationScope.nonCancellable(() => markRunFailed({ runId, reason }));
    throw error;
  }
}

/**
 * 4. Aggregate and write report.json, results.csv, report.md. Not cancellable: once the files are being written the
 * run completes, so the stored status always matches the files on disk (a cancel arriving now comes too late).
 */
async function report(runId: string, progress: Progress): Promise<RunResult> {
  progress.stage = 'report';
  const { reportPath } = await CancellationScope.nonCancellable(() => writeReport({ runId }));
  Object.assign(progress, { stage: 'done', reportPath });
  return { runId, reportPath, progress };
}

/** Temporal's default limit on workflow id length (the server's limit.maxIDLength). */
const MAX_WORKFLOW_ID_LENGTH = 1000;

/**
 * The server rejects a child whose id is too long by failing the parent's workflow task (BadStartChildExecutionAttributes),
 * which the workflow never sees and the server retries for ever. Refusing it here fails the run with the reason instead.
 */
function childWorkflowId(id: string): string {
  if (id.length <= MAX_WORKFLOW_ID_LENGTH) return id;
  throw ApplicationFailure.nonRetryable(
    `child workflow id "${id.slice(0, 80)}…" is ${id.length} characters, over Temporal's limit of ${MAX_WORKFLOW_ID_LENGTH}; use shorter copilot names`,
    'InputError',
  );
}

function tally(progress: Progress, result: ChunkResult): void {
  progress.done += result.done + result.failed;
  progress.failures += result.failed;
}

/** Collects one copilot's answers to a slice of queries, within that copilot's limits. */
export async function collectChunk({ runId, copilot, queryIds }: CollectChunkInput): Promise<ChunkResult> {
  const { collectResponse, recordCollectFailure } = proxyActivities<BenchmarkActivities>(copilotCallOptions(copilot));
  const result: ChunkResult = { done: 0, failed: 0 };
  const interval = copilot.requestsPerMinute ? Math.ceil(60_000 / copilot.requestsPerMinute) : 0;
  await runPool(queryIds, copilot.concurrency, interval, async (queryId) => {
    try {
      const status = await collectResponse({ runId, queryId, copilot: copilot.name, maxAttempts: copilot.retry.maxAttempts });
      if (status === 'ok') result.done++;
      else result.failed++;
    } catch (error) {
      if (isCancellation(error)) throw error; // a cancelled run records nothing more
      // Even a copilot that breaks every attempt must not lose the rest of the run.
      log.warn('collection failed for good', { queryId, copilot: copilot.name });
      await recordCollectFailure({ runId, queryId, copilot: copilot.name, reason: rootCause(error) });
      result.failed++;
    }
  });
  return result;
}

/** Judges units [from, to) of a run, at most `judge.concurrency` at a time (a panel: each judge within its own limits). */
export async function judgeChunk({ runId, judge, judges, from, to, unitTimeoutMs }: JudgeChunkInput): Promise<ChunkResult> {
  const result: ChunkResult = { done: 0, failed: 0 };
  const indexes = Array.from({ length: to - from }, (_, k) => from + k);
  const lanes = judges?.length ? judges.map((limits, j) => ({ limits, items: indexes.filter((i) => i % judges.length === j) })) : [{ limits: judge, items: indexes }];
  await Promise.all(
    lanes.map(({ limits, items }) => {
      const { judgeUnit, recordJudgeFailure } = proxyActivities<BenchmarkActivities>({
        // A unit may be a whole shared conversation (one call per copilot, a ranking, taxonomy checks, re-asks): planJudging
        // sizes the largest unit's worst case. Finished turns are stored, so a retry resumes mid-conversation. Runs planned
        // before that carry no size and keep the old fixed bound. A dead worker is caught by the heartbeat timeout.
        startToCloseTimeout: unitTimeoutMs ?? limits.timeoutMs * 20 + 60_000,
        heartbeatTimeout: '10 seconds',
        // Long enough to ride out a judge outage or a burst of 429s (Retry-After is honoured); 4xx errors are not retried.
        retry: { maximumAttempts: limits.maxAttempts, initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
      });
      return runPool(items, limits.concurrency, 0, async (index) => {
        try {
          const r = await judgeUnit({ runId, index });
          result.done += r.judged > 0 && r.failed === 0 ? 1 : 0;
          result.failed += r.failed > 0 ? 1 : 0;
        } catch (error) {
          if (isCancellation(error)) throw error;
          await recordJudgeFailure({ runId, index, reason: rootCause(error) });
          result.failed++;
        }
      });
    }),
  );
  return result;
}
