import { ApplicationFailure, log } from '@temporalio/activity';
import { DEFAULT_MAX_CONTEXT_CHARS, limitContext } from '../core/grounding/checks';
import { adapterFor } from './adapters';
import type { CollectedResponse, CopilotAdapter } from './adapters/types';
import { toAdapterError } from './adapters/errors';
import type { Query, StoredResponse } from '../core/model/types';
import { cancellationSignal, currentAttempt, untilSendTime, withHeartbeat } from './heartbeat';
import { yieldToHigherPriority } from './priorityGate';
import { requireRun, seedNumber, type ActivityDeps, type StoredRunConfig } from './deps';
import { cappedRetryAfterMs, redact, secretValues } from './adapters/common';
import type { CopilotConfig } from './adapters';
import type { RunRecord } from '../core/model/store';
import { artefactSaver } from './artefacts';
import type { CallOutcome, ItemFailure, SendSlot } from '../contract/run';
import { runItemGroup, type ItemGroupResult } from './itemGroup';
import { bulkLane } from './bulkLane';
import { copilotCallRecord, queryCharsOf } from '../core/stats/cost';

/** How many imported answers one transaction writes (importAnswers). */
const IMPORT_BATCH = 500;

/** Per run and copilot: the adapter, and the settings it was made with (resume --config may replace them). */
const adapters = new Map<string, { adapter: CopilotAdapter; settings: string }>();
/**
 * Answers this worker received but could not store (the results store stayed unreachable past the run's
 * storeOutageMinutes): the activity's next attempt here stores the answer it holds instead of paying for it again.
 */
const heldAnswers = new Map<
  string,
  { answer: CollectedResponse; started: Date; finished: Date; callRecorded: boolean; requestChars: number }
>();

/** A copilot config's settings as text, once per config object (an import asks for it once per answer). */
const settingsText = new WeakMap<CopilotConfig, string>();
function settingsOf(config: CopilotConfig): string {
  let text = settingsText.get(config);
  if (text === undefined) settingsText.set(config, (text = JSON.stringify(config)));
  return text;
}

export function collectActivities(deps: ActivityDeps) {
  /** One adapter per run and copilot per worker process (the browser adapter shares one browser across them). */
  function adapterOf(run: RunRecord & { config: StoredRunConfig }, config: CopilotConfig): CopilotAdapter {
    const key = `${run.runId}\u0000${config.name}`;
    const settings = settingsOf(config);
    let made = adapters.get(key);
    if (!made || made.settings !== settings) {
      void made?.adapter.close?.().catch(() => undefined); // replaced settings: its MCP servers and connections let go
      // Screenshots go to the store, not this worker's disk: the run may finish, and be reported, on another machine.
      made = {
        adapter: adapterFor(config.type).create(config, {
          env: deps.env,
          saveArtefact: artefactSaver(deps.store, run.runId),
          seed: seedNumber(run.config.seed),
        }),
        settings,
      };
      adapters.set(key, made);
    }
    return made.adapter;
  }

  /**
   * Ask one copilot one query and store what it answered (or, on the last attempt, why it failed). A retryable fault
   * goes back to Temporal (honouring Retry-After), except a throttle when `throttles` is 'report': that comes back as
   * `throttled`, for the workflow's limiter.
   */
  async function collectAndStore(
    run: RunRecord & { config: StoredRunConfig },
    queryId: string,
    copilot: string,
    lastAttempt: boolean,
    throttles: 'throw' | 'report' = 'throw',
    /** The query, when the caller has it already (an import reads every query of the snapshot in one go). */
    known?: Query,
    /** Where the response goes instead of the store (an import writes its answers many to a transaction). */
    sink?: (response: StoredResponse) => Promise<void>,
  ): Promise<{ status: 'ok' | 'failed' | 'missing' | 'throttled'; outcome: CallOutcome; failure?: ItemFailure }> {
    const { store } = deps;
    const putResponse = sink ?? ((r: StoredResponse) => store.putResponse(r));
    const input = { runId: run.runId, queryId, copilot };
    const config = run.config.copilots.find((c) => c.name === input.copilot);
    if (!config) throw ApplicationFailure.nonRetryable(`copilot ${input.copilot} is not in run ${input.runId}`);
    const started = new Date();
    const base = {
      runId: input.runId,
      queryId: input.queryId,
      copilot: input.copilot,
      adapter: config.type,
      startedAt: started.toISOString(),
    };
    // Answers held in a file (csv, file) were paid for elsewhere; every other adapter's attempt is a request worth counting.
    // The request's and reply's size, for an estimate where the copilot reports no usage (core/stats/cost.ts).
    let requestChars: number | null = null;
    const recordCall = async (c: {
      ok: boolean;
      errorKind: string | null;
      latencyMs: number;
      usage?: CollectedResponse['usage'];
      replyChars: number | null;
    }) => {
      // An agent records each model turn itself, as it completes; answers held in a file cost nothing here.
      if (adapterFor(config.type).importSource || adapterFor(config.type).recordsOwnCalls) return;
      const model = 'model' in config && typeof config.model === 'string' ? config.model : null;
      await store.putLlmCall(copilotCallRecord({ ...input, model }, { ...c, requestChars }));
    };
    // Cancelling the run aborts the request or closes the page within a heartbeat, not after the copilot's timeout.
    const cancellation = cancellationSignal();
    // An import (a sink given) reads a file the activity heartbeats around: no per-answer timer, heartbeat or held copy,
    // each of which costs more than the answer's read itself when thousands are imported in one activity.
    const importing = sink !== undefined;
    const timeout = importing ? undefined : new AbortController();
    const timer = timeout && setTimeout(() => timeout.abort(), config.timeoutMs);
    const key = `${input.runId}\u0000${input.queryId}\u0000${input.copilot}`;
    try {
      // An answer this worker already has (its storing failed: the store was unreachable too long) is stored, not asked again.
      let held = importing ? undefined : heldAnswers.get(key);
      if (!held) {
        // Inside the try: a config problem (e.g. an unset ${VAR}) is recorded once as a non-retryable failure.
        const adapter = adapterOf(run, config);
        const query = known ?? (await store.snapshotQuery(run.snapshotId, input.queryId));
        requestChars = queryCharsOf(query);
        const collect = () =>
          adapter.collect({
            query,
            signal: timeout ? AbortSignal.any([timeout.signal, cancellation]) : cancellation,
            item: { store, runId: input.runId, queryId: input.queryId, copilot: input.copilot },
          });
        const answer = await (importing ? collect() : withHeartbeat(collect));
        clearTimeout(timer); // the copilot has answered: waiting for the store is not the copilot timing out
        held = { answer, started, finished: new Date(), callRecorded: false, requestChars };
        if (!importing) heldAnswers.set(key, held);
      }
      const { answer, finished } = held;
      const latencyMs = finished.getTime() - held.started.getTime();
      const imported = answer.writtenAt !== undefined; // answered elsewhere, earlier: no latency, its own time or none
      requestChars = held.requestChars;
      if (!held.callRecorded)
        await recordCall({ ok: true, errorKind: null, latencyMs, usage: answer.usage, replyChars: answer.text.length });
      held.callRecorded = true;
      // Context can be megabytes of tool output: kept up to the limit, the cut marked (reports count and show it).
      const kept = limitContext(answer.context, run.config.grounding?.maxContextChars ?? DEFAULT_MAX_CONTEXT_CHARS);
      if (kept.truncated)
        activityWarn(
          `copilot ${input.copilot}: context of query ${input.queryId} cut to ${run.config.grounding?.maxContextChars ?? DEFAULT_MAX_CONTEXT_CHARS} characters (grounding.maxContextChars)`,
        );
      await putResponse({
        ...base,
        startedAt: held.started.toISOString(),
        status: 'ok',
        text: answer.text,
        raw: answer.raw ?? null,
        html: answer.html ?? null,
        finishedAt: imported ? (answer.writtenAt ?? null) : finished.toISOString(),
        latencyMs: imported ? null : latencyMs,
        errorKind: null,
        errorMessage: null,
        conversationId: answer.conversationId ?? null,
        context: kept.context,
        ...(answer.sources?.length ? { sources: answer.sources } : {}),
      });
      heldAnswers.delete(key);
      const tokens = (answer.usage?.promptTokens ?? 0) + (answer.usage?.completionTokens ?? 0);
      return { status: 'ok', outcome: { tokens: tokens || undefined, rateLimit: answer.rateLimit } };
    } catch (thrown) {
      if (cancellation.aborted) throw cancellation.reason; // a cancelled run records nothing for this item
      const error = toAdapterError(
        thrown,
        `copilot ${input.copilot}`,
        timeout ? { timeout: { signal: timeout.signal, ms: config.timeoutMs } } : {},
      );
      const secrets = secretValues(config, deps.env);
      const message = redact(error.message, secrets)!;
      if (!['config', 'missing', 'store_busy'].includes(error.kind))
        await recordCall({
          ok: false,
          errorKind: error.kind,
          latencyMs: Date.now() - started.getTime(),
          replyChars: error.options.raw?.length ?? null,
        });
      // A busy store is nobody's answer: always back to Temporal (the workflow records the item if every attempt fails).
      const throttled =
        error.kind === 'rate_limited' || error.options.retryAfterMs !== undefined || error.options.status === 503;
      const retryAfterMs = cappedRetryAfterMs(error.options.retryAfterMs, config.retry);
      const cause = error.options.status
        ? `HTTP ${error.options.status}`
        : error.kind === 'rate_limited'
          ? 'HTTP 429'
          : error.kind;
      if (throttles === 'report' && throttled && !lastAttempt)
        return { status: 'throttled', outcome: { throttled: true, retryAfterMs, cause } };
      if (error.kind === 'store_busy' || (error.retryable && !lastAttempt)) {
        throw ApplicationFailure.create({ type: error.kind, message, nextRetryDelay: retryAfterMs });
      }
      const finished = new Date();
      const status: StoredResponse['status'] = error.kind === 'missing' ? 'missing' : 'failed';
      await putResponse(
        failedResponse({
          ...base,
          status,
          finishedAt: finished.toISOString(),
          latencyMs: finished.getTime() - started.getTime(),
          errorKind: error.kind,
          errorMessage: message,
          raw: redact(error.options.raw ?? null, secrets),
        }),
      );
      // What the workflow's breaker reads (workflows/breaker.ts): the kind and the copilot's own words.
      return { status, outcome: { throttled }, failure: { kind: error.kind, message, transient: error.retryable } };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Ask one copilot one query, store what it answered (on the last attempt, why it failed), and tell the workflow's
   * limiter what the copilot said. `attempt` counts the workflow's earlier tries of this item (each throttled one);
   * `send` is when the limiter allows the call (it may start the activity a little ahead). An answer stored already
   * (a retry after a dead worker) is not asked again.
   */
  async function askCopilot(input: {
    runId: string;
    queryId: string;
    copilot: string;
    attempt: number;
    maxAttempts: number;
    send?: SendSlot;
  }): Promise<{ status: 'ok' | 'failed' | 'missing' | 'throttled'; outcome: CallOutcome; failure?: ItemFailure }> {
    await yieldToHigherPriority(deps.store, input.runId); // a run of a higher priority making calls goes first
    const existing = await deps.store.getResponse(input.runId, input.queryId, input.copilot);
    if (existing) return { status: existing.status, outcome: {} };
    const last = input.attempt + currentAttempt() - 1 >= input.maxAttempts;
    // The store's reads before the send time, so the request leaves at it (a read after it would make every send late).
    const run = await requireRun(deps, input.runId);
    // (A read that fails is read again inside collectAndStore, which records or retries it as before.)
    const query = await deps.store.snapshotQuery(run.snapshotId, input.queryId).catch(() => undefined);
    const sent = await untilSendTime(deps.store, input.runId, input.send);
    const result = await collectAndStore(run, input.queryId, input.copilot, last, 'report', query);
    return { ...result, outcome: { ...result.outcome, ...sent } };
  }

  return {
    askCopilot,

    /** Several queries asked of one copilot in a row, in one activity (see runItemGroup). */
    async askCopilotBatch(input: {
      runId: string;
      copilot: string;
      queryIds: string[];
    }): Promise<ItemGroupResult<{ status: 'ok' | 'failed' | 'missing' | 'throttled'; failure?: ItemFailure }>> {
      // A throttle comes back at once, whatever the attempt: the workflow then asks that query again on its own.
      return runItemGroup(
        input.queryIds,
        (queryId) =>
          askCopilot({ runId: input.runId, queryId, copilot: input.copilot, attempt: 1, maxAttempts: Infinity }),
        (result) => result.status === 'throttled',
      );
    },

    /**
     * Answers held already (a CSV or JSON file): these copilots' answers to every query of the snapshot, or to the
     * snapshot's queries `from` (inclusive) `to` (exclusive) when `queries` is given, read from one source and stored in
     * one step. Returns how many answers were stored and how many were missing or failed.
     */
    async importAnswers(input: {
      runId: string;
      copilots: string[];
      queries?: { from: number; to: number };
    }): Promise<{ ok: number; failed: number }> {
      const run = await requireRun(deps, input.runId);
      const counts = { ok: 0, failed: 0 };
      const page = input.queries;
      const queries = await deps.store.snapshotQueries(run.snapshotId, page?.from, page?.to);
      // What a retried import stored already, read in one query rather than one per answer (1,200 × 4 answers: seconds):
      // these copilots' keys only, not every stored answer's text (imports of the other copilots run beside this one).
      const ofPage = page ? queries.map((q) => q.id) : undefined;
      const stored = new Map(
        (await deps.store.responseStatuses(input.runId, input.copilots, ofPage)).map((r) => [
          `${r.queryId}\u0000${r.copilot}`,
          r.status,
        ]),
      );
      // Written IMPORT_BATCH answers to a transaction, not one commit per answer (4,800 answers: seconds of fsyncs).
      // A crash loses at most the batch being read; the retry reads those answers again from their files.
      const batch: StoredResponse[] = [];
      const flush = async () => {
        try {
          await deps.store.putResponses(batch);
        } catch (thrown) {
          // As one answer's storing: a store unreachable past storeOutageMinutes, or busy, goes back to Temporal.
          const error = toAdapterError(thrown, 'the results store');
          if (error.kind === 'store_busy')
            throw ApplicationFailure.create({ type: error.kind, message: error.message });
          throw thrown;
        }
        batch.length = 0;
      };
      const sink = async (r: StoredResponse) => {
        batch.push(r);
      };
      // Reading and storing answers is bulk work, in short slices that leave the worker's event loop to the workflow's
      // tasks and the judge calls of a run judging while the rest of its answers are imported; a batch's write to the
      // store waits outside the lane.
      await withHeartbeat(() =>
        bulkLane.run(async (pause, away) => {
          for (const copilot of input.copilots)
            for (const query of queries) {
              const status =
                stored.get(`${query.id}\u0000${copilot}`) ??
                (await collectAndStore(run, query.id, copilot, true, 'throw', query, sink)).status;
              counts[status === 'ok' ? 'ok' : 'failed']++;
              if (batch.length >= IMPORT_BATCH) await away(flush);
              await pause();
            }
          await away(flush);
        }),
      );
      return counts;
    },

    /** Called by the workflow when every attempt crashed (e.g. workers kept dying): the item is failed, the run goes on. */
    async recordAnswerFailure(input: {
      runId: string;
      queryId: string;
      copilot: string;
      reason: string;
    }): Promise<void> {
      const run = await requireRun(deps, input.runId);
      const config = run.config.copilots.find((c) => c.name === input.copilot);
      const errorMessage = redact(input.reason, config ? secretValues(config, deps.env) : []);
      await deps.store.putResponse(
        failedResponse({
          runId: input.runId,
          queryId: input.queryId,
          copilot: input.copilot,
          adapter: config?.type ?? 'unknown',
          status: 'failed',
          errorKind: 'activity',
          errorMessage,
        }),
      );
    },
  };
}

function failedResponse(
  r: Partial<StoredResponse> &
    Pick<StoredResponse, 'runId' | 'queryId' | 'copilot' | 'adapter' | 'status' | 'errorKind' | 'errorMessage'>,
): StoredResponse {
  return {
    text: null,
    raw: null,
    html: null,
    startedAt: null,
    finishedAt: null,
    latencyMs: null,
    conversationId: null,
    context: null,
    ...r,
  };
}

/** The activity's logger; outside an activity (adapter tests) there is none, and the cut is still marked in the text. */
function activityWarn(message: string): void {
  try {
    log.warn(message);
  } catch {
    // no activity context
  }
}
