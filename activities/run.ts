import fs from 'node:fs';
import { ApplicationFailure } from '@temporalio/activity';
import { judgmentSlot, type JudgeContext } from '../core/model/protocol';
import { slotOf, type ResultsStore } from '../core/model/store';
import { DEFAULT_MAX_ANSWER_CHARS, truncatedAnswer } from '../core/snapshots/text';
import { contentHash } from '../core/model/hashing';
import { InputError } from '../core/model/inputError';
import { loadConfiguredRubric, protocolFor } from '../rubrics';
import type { BenchmarkRunInput, PreparedRun, SendSlot } from '../contract/run';
import { snapshotIdOf } from '../core/snapshots/snapshots';
import {
  judgeEndpoint,
  protocolOptions,
  requireRubric,
  requireRun,
  runJudgeRecord,
  runJudges,
  type ActivityDeps,
  type StoredRunConfig,
} from './deps';
import { cancellationSignal, currentAttempt, untilSendTime, withHeartbeat } from './heartbeat';
import { yieldToHigherPriority } from './priorityGate';
import type { AnswerCache, CallUsage, RateLimitInfo } from '../core/llm/client';
import type { CallOutcome } from '../contract/run';
import { msToNumber } from '@temporalio/common/lib/time';
import { toAdapterError } from './adapters/errors';
import { inputFailure, nonRetryableInput } from './failures';
import { cappedRetryAfterMs, redact, secretValues } from './adapters/common';
import { renderReport, writeResponsesBeside } from '../services/runReport';
import { runItemGroup, type ItemGroupResult } from './itemGroup';
import { judgeGroundingItem, recordGroundingFailure, storeGroundingRubric } from './grounding';
import { servedBySimulator } from './simulated';
import {
  AskedLive,
  batchReplies,
  cancelBatches,
  countDuplicatesOrSay,
  DeferredToBatch,
  ingestBatch,
  pollBatch,
  prepareRound,
  submitLines,
  type PendingLine,
  type PreparedRound,
  type RoundBudget,
  type SubmittedBatch,
} from './judgeBatch';

/** A re-judge or resume starts from a stored config: the key it carried is the source run's, not this run's. */
function withoutRunKey(config: StoredRunConfig): StoredRunConfig {
  const { runKey: _key, ...rest } = config;
  return rest;
}

export function runActivities(deps: ActivityDeps) {
  const { store } = deps;

  /**
   * Judge one work item. With batch judging on, its requests are answered from the run's batch lines where they hold an
   * answer (activities/judgeBatch.ts); preparing a batch (`batchLines`), a request without one is taken as a line.
   */
  async function judgeStoredUnit(
    runId: string,
    index: number,
    onCall?: (usage: CallUsage) => void,
    batchLines?: Map<string, PendingLine>,
    /** Awaited before each judge request is sent (a paced item's send time: after the reads its request needs). */
    beforeSend?: () => Promise<void>,
  ): Promise<{ judged: number; failed: number }> {
    const run = await requireRun(deps, runId);
    const [unit] = await store.judgeUnits(runId, index, index + 1);
    if (!unit) throw ApplicationFailure.nonRetryable(`run ${runId} has no judge unit ${index}`);
    const slot = slotOf(unit);
    // Every judge request sent is recorded for the cost figures, and its usage told to the workflow's limiter; an answer
    // reused from the store is recorded as such (the cost table counts it apart) and tells the limiter nothing.
    const recordCall = (name: string) => (usage: CallUsage) => {
      if (!usage.reused) onCall?.(usage);
      return store.putLlmCall({
        runId,
        role: 'judge',
        name,
        queryId: unit.queryId,
        ...withoutLimits(usage),
        at: new Date().toISOString(),
      });
    };
    const cache: AnswerCache = {
      get: run.config.reuseJudgments ? (k) => store.cachedAnswer(k) : async () => null,
      set: (k, v) => store.cacheAnswer(k, v),
      ...(batchLines || runJudges(run.config).some((j) => j.batch)
        ? { batchReply: batchReplies(store, runId, { index, queryId: unit.queryId, judge: slot.judge }, batchLines) }
        : {}),
    };
    // Heartbeats deliver a cancel; the signal then aborts the judge call in flight and every later one.
    const signal = cancellationSignal();
    const judging =
      unit.kind === 'grounding'
        ? () =>
            judgeGroundingItem(deps, run, unit, slot, {
              cache,
              signal,
              recordCall: (name, usage) => recordCall(name)(usage),
              beforeSend,
            })
        : async () => {
            const rubric = await requireRubric(deps, run);
            const judge = judgeEndpoint(run, slot, rubric.judge.temperature);
            const ctx: JudgeContext = {
              store: answersCappedForJudge(store, run.config.maxAnswerChars ?? DEFAULT_MAX_ANSWER_CHARS),
              runId,
              snapshotId: run.snapshotId,
              rubric,
              judge,
              slot,
              env: deps.env,
              cache,
              options: protocolOptions(protocolFor(run.protocol), run.config),
              signal,
              recordCall: recordCall(slot.judge || judge.model),
              beforeSend,
            };
            return protocolFor(run.protocol).judgeUnit(unit, ctx);
          };
    try {
      return await withHeartbeat(judging);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (error instanceof DeferredToBatch || error instanceof AskedLive) throw error;
      const judges = [...runJudges(run.config), ...(run.config.grounding?.judge ? [run.config.grounding.judge] : [])];
      const own =
        unit.kind === 'grounding' && run.config.grounding?.judge
          ? run.config.grounding.judge
          : (runJudges(run.config).find((j) => j.name === slot.judge) ?? judges[0]);
      throw judgeFailure(
        error,
        judges.flatMap((j) => secretValues(j, deps.env)),
        own?.maxRetryAfterSeconds,
      );
    }
  }

  /**
   * Judge one work item, and tell the workflow's limiter what the judge said.
   * A throttled call (429/503, Retry-After) before the last attempt comes back as `throttled` instead of failing, so the
   * workflow shrinks the judge's window and asks again later; finished turns are stored, so the next try resumes.
   */
  async function judgeItem({
    runId,
    index,
    attempt,
    maxAttempts,
    send,
  }: {
    runId: string;
    index: number;
    attempt: number;
    maxAttempts: number;
    send?: SendSlot;
  }): Promise<{ judged: number; failed: number; throttled: boolean; outcome: CallOutcome }> {
    await yieldToHigherPriority(store, runId); // a run of a higher priority making calls goes first
    // The first judge request waits until the workflow's limiter allows it (it may start the activity ahead), after the
    // store's reads the request needs: a read after the send time would make every send late. None sent, none waited.
    const sent: Pick<CallOutcome, 'sentLateMs'> = {};
    let waited: Promise<void> | undefined;
    const beforeSend = () =>
      (waited ??= untilSendTime(store, runId, send).then((told) => void Object.assign(sent, told)));
    const usage: { tokens: number; rateLimit?: RateLimitInfo } = { tokens: 0 };
    try {
      const result = await judgeStoredUnit(
        runId,
        index,
        (call) => {
          usage.tokens += (call.promptTokens ?? 0) + (call.completionTokens ?? 0);
          if (call.rateLimit) usage.rateLimit = call.rateLimit; // the latest call's word on the limits
        },
        undefined,
        send ? beforeSend : undefined,
      );
      return {
        ...result,
        throttled: false,
        outcome: { tokens: usage.tokens || undefined, rateLimit: usage.rateLimit, ...sent },
      };
    } catch (error) {
      const throttle = error instanceof ApplicationFailure ? throttleOf(error) : null;
      if (throttle && attempt + currentAttempt() - 1 < maxAttempts)
        return {
          judged: 0,
          failed: 0,
          throttled: true,
          outcome: {
            throttled: true,
            retryAfterMs: throttle.retryAfterMs,
            tokens: usage.tokens || undefined,
            cause: throttle.cause,
            ...sent,
          },
        };
      throw error;
    } finally {
      // The report's thread loads its modules while the run judges: started once a judge call has ended, it does not
      // take a core from the run's start (the import of held answers, the first calls' requests).
      deps.warmReport?.(runId);
    }
  }

  /** The snapshot's query count as its record holds it (written with its queries), not its queries read and parsed. */
  async function queryCountOf(snapshotId: string): Promise<number> {
    const snapshot = await store.getSnapshot(snapshotId);
    if (!snapshot) throw new Error(`snapshot ${snapshotId} is not in the results store ${store.location}`);
    return snapshot.queryCount;
  }

  return {
    /**
     * Stage 1: store the snapshot, the rubric and the run record. Idempotent. Resumed from the store
     * (`resumeFromStore`), a run already recorded is adopted as it is: no new snapshot, rubric or run row.
     */
    async prepareRun(input: BenchmarkRunInput<StoredRunConfig>): Promise<PreparedRun> {
      const existing = input.resumeFromStore ? await store.getRun(input.runId) : null;
      if (existing)
        return {
          snapshotId: existing.snapshotId,
          rubricVersion: existing.rubricVersion,
          queryCount: await queryCountOf(existing.snapshotId),
        };
      const { config } = input;
      const protocol = protocolFor(config.protocol);
      let snapshotId = '';
      let copilots = config.copilots.map((c) => c.name);
      await nonRetryableInput(async () => {
        if (input.sourceRunId) {
          const source = await requireRun(deps, input.sourceRunId);
          snapshotId = source.snapshotId;
          copilots = source.copilots;
          await store.adoptResponses(source.runId, input.runId);
        } else if (input.snapshotId) {
          if (!(await store.getSnapshot(input.snapshotId)))
            throw new InputError(
              `snapshot ${input.snapshotId} is not in the results store ${store.location} (see judgeflow snapshot list)`,
            );
          snapshotId = input.snapshotId;
        } else {
          const queries = protocol.parseQueries(config.queries);
          snapshotId = snapshotIdOf(queries);
          await store.putSnapshot(
            {
              snapshotId,
              createdAt: new Date().toISOString(),
              parentId: null,
              meta: {
                generator: 'import',
                protocol: protocol.id,
                source: config.queries,
                sourceHash: contentHash(fs.readFileSync(config.queries, 'utf8')),
              },
            },
            queries,
          );
        }
        const rubric = loadConfiguredRubric(protocol, config.rubric);
        await store.putRubric(rubric.version, protocol.id, rubric.content);
        const groundingVersion = await storeGroundingRubric(deps, config);
        const simulated = config.simulated || (await servedBySimulator(config));
        await store.createRun({
          runId: input.runId,
          protocol: protocol.id,
          snapshotId,
          rubricVersion: rubric.version,
          judge: runJudgeRecord(config, rubric.judge.temperature),
          copilots,
          startedAt: new Date().toISOString(),
          sourceRunId: input.sourceRunId ?? null,
          config: {
            ...withoutRunKey(config),
            simulated,
            reuseJudgments: input.reuseJudgments ?? false,
            ...(groundingVersion ? { groundingVersion } : {}),
            ...(input.runKey ? { runKey: input.runKey } : {}),
          },
        });
      });
      const run = await requireRun(deps, input.runId);
      // The count, not the ids: a 100,000-query snapshot's ids would make this result (and every continue-as-new input
      // carrying it) a megabyte or more. The workflow reads them a page at a time (snapshotQueryIds).
      return {
        snapshotId: run.snapshotId,
        rubricVersion: run.rubricVersion,
        queryCount: await queryCountOf(run.snapshotId),
      };
    },

    /** The ids of the snapshot's queries at positions [offset, offset + limit), in order (workflows/queryPages.ts). */
    async snapshotQueryIds({
      snapshotId,
      offset,
      limit,
    }: {
      snapshotId: string;
      offset: number;
      limit: number;
    }): Promise<string[]> {
      return (await store.snapshotQueries(snapshotId, offset, offset + limit)).map((q) => q.id);
    },

    judgeItem,

    /**
     * Batch judging, one round of one judge: each item runs until it needs a request no batch has answered yet, which
     * becomes a line of this round's batches (submitted here). Items that needed nothing more are finished (`done`);
     * items a failed or expired line (or an endpoint without a Batch API) left go to the judge's live calls (`live`).
     */
    async submitJudgeBatch({
      runId,
      round,
      indices,
      budget,
    }: {
      runId: string;
      round: string;
      indices: number[];
      budget?: RoundBudget;
    }): Promise<Omit<PreparedRound, 'lines'> & { batches: SubmittedBatch[] }> {
      const { lines, ...outcome } = await withHeartbeat(() =>
        prepareRound(deps, runId, indices, (index, taken) => judgeStoredUnit(runId, index, undefined, taken), budget),
      );
      return { ...outcome, batches: await withHeartbeat(() => submitLines(deps, runId, round, lines)) };
    },

    /** The provider's state and counts of a submitted judge batch. */
    pollJudgeBatch: ({ runId, key, deadlineHours }: { runId: string; key: string; deadlineHours?: number }) =>
      pollBatch(deps, runId, key, deadlineHours),

    /** An ended judge batch's results, stored line by line (idempotent). */
    ingestJudgeBatch: ({ runId, key, deadlineHours }: { runId: string; key: string; deadlineHours?: number }) =>
      ingestBatch(deps, runId, key, deadlineHours),

    /** A cancelled run's batches still running, cancelled at the provider. */
    cancelJudgeBatches: ({ runId, keys }: { runId: string; keys: string[] }) => cancelBatches(deps, runId, keys),

    /** Several work items of one judge judged in a row, in one activity (see runItemGroup). */
    async judgeItems({
      runId,
      indices,
    }: {
      runId: string;
      indices: number[];
    }): Promise<ItemGroupResult<{ judged: number; failed: number; throttled: boolean }>> {
      // A throttle comes back at once, whatever the attempt: the workflow then asks the item again on its own.
      return runItemGroup(
        indices,
        (index) => judgeItem({ runId, index, attempt: 1, maxAttempts: Infinity }),
        (result) => result.throttled,
      );
    },

    /** When every attempt of a judge unit crashed: record each of its judgments as failed (missing data, not a score). */
    async recordJudgeFailure({
      runId,
      index,
      reason,
    }: {
      runId: string;
      index: number;
      reason: string;
    }): Promise<void> {
      const run = await requireRun(deps, runId);
      const [unit] = await store.judgeUnits(runId, index, index + 1);
      if (unit?.kind === 'grounding') return recordGroundingFailure(deps, run, unit, slotOf(unit), reason);
      for (const copilot of unit?.copilots ?? []) {
        await store.putJudgment({
          ...judgmentSlot(slotOf(unit)),
          runId,
          queryId: unit.queryId,
          copilot,
          rubricVersion: run.rubricVersion,
          status: 'failed',
          scores: null,
          rationales: null,
          total: null,
          rank: null,
          position: null,
          error: reason,
          judge: { ...run.judge, rubricVersion: run.rubricVersion },
          attempts: 0,
          createdAt: new Date().toISOString(),
        });
      }
    },

    /** Stage 3: aggregate and write report.json, results.csv, report.md (each written whole, then renamed into place). */
    async writeReport({
      runId,
      control,
    }: {
      runId: string;
      control?: Record<string, unknown>;
    }): Promise<{ reportPath: string }> {
      // Kept with the run, so every later rendering (judgeflow report, view) shows it too.
      if (control) await store.putWork(`control:${runId}`, 'record', control);
      // Heartbeats throughout, so a worker that dies while rendering is noticed within the heartbeat timeout.
      await countDuplicatesOrSay(deps, runId); // every batch paid for is in the cost table, duplicates cancelled after a crash too
      const signal = cancellationSignal();
      const { reportPath, summary } = await withHeartbeat(
        () =>
          deps.renderReport
            ? deps.renderReport(runId, signal, () => writeResponsesBeside(deps, runId))
            : renderReport(deps, runId),
        1_000,
      );
      await store.finishRun(runId, 'completed', reportPath, summary, new Date().toISOString());
      return { reportPath };
    },

    async markRunFailed({ runId, reason }: { runId: string; reason: string }): Promise<void> {
      if (await store.getRun(runId))
        await store.finishRun(runId, 'failed', null, { error: reason }, new Date().toISOString());
    },
  };
}

/**
 * The store as a judge reads it (without `raw` and `html`): an answer longer than `maxAnswerChars` comes back truncated, with a note the judge sees
 * (reports list those answers: see truncatedForJudge). What is stored, exported and shown stays whole.
 */
function answersCappedForJudge(store: ResultsStore, maxAnswerChars: number): ResultsStore {
  const capped = Object.create(store) as ResultsStore;
  capped.getResponse = async (runId, queryId, copilot) => {
    // A judge reads the answer, its context and sources, never the raw provider payload or a browser copilot's page.
    const response = await store.getResponse(runId, queryId, copilot, { payloads: false });
    const text = response?.text ? truncatedAnswer(response.text, maxAnswerChars, 'the judge saw only this part') : null;
    return text === null ? response : { ...response!, text };
  };
  return capped;
}

/** Rate-limit details of a call are for the workflow's limiter, not the cost records. */
function withoutLimits(usage: CallUsage): Omit<CallUsage, 'rateLimit'> {
  const { rateLimit: _, ...rest } = usage;
  return rest;
}

/** A judge failure that says "fewer calls, please" (429, 503, or any Retry-After). */
function throttleOf(failure: ApplicationFailure): { retryAfterMs?: number; cause: string } | null {
  const retryAfterMs =
    failure.nextRetryDelay === undefined || failure.nextRetryDelay === null
      ? undefined
      : msToNumber(failure.nextRetryDelay);
  // What status names as the reason of a wait ("the judge: waiting 60 s (Retry-After) after HTTP 503").
  const cause =
    /HTTP (\d{3})\b/.exec(failure.message)?.[0] ??
    (failure.type === 'judge_rate_limited' ? 'HTTP 429' : (failure.type ?? 'throttled'));
  if (failure.type === 'judge_rate_limited' || retryAfterMs !== undefined || /HTTP 503\b/.test(failure.message))
    return { retryAfterMs, cause };
  return null;
}

/**
 * How a judge-side error goes back to Temporal: a rubric problem is not retried; HTTP 429/5xx and network errors are,
 * honouring Retry-After; other 4xx (bad model, bad key, an unsupported parameter) and unrecognised errors (bugs) are not.
 * Secret values never reach the failure message.
 */
function judgeFailure(error: unknown, secrets: string[], maxRetryAfterSeconds: number | undefined): ApplicationFailure {
  if (error instanceof InputError) return inputFailure(error, redact(error.message, secrets)!);
  if (error instanceof ApplicationFailure) return error;
  const mapped = toAdapterError(error, 'judge');
  const message = redact(mapped.message, secrets)!;
  // A Retry-After no longer than the judge's maxRetryAfterSeconds (default 60, as copilots'): a 503 asking for ten
  // minutes must not hold every judge call of the run for ten minutes per attempt.
  return mapped.retryable
    ? ApplicationFailure.create({
        type: `judge_${mapped.kind}`,
        message,
        nextRetryDelay: cappedRetryAfterMs(mapped.options.retryAfterMs, { maxRetryAfterSeconds }),
      })
    : ApplicationFailure.nonRetryable(message, `judge_${mapped.kind}`);
}
