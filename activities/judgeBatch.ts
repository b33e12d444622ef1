import { log } from '@temporalio/activity';
import { meanAnswerTokens, priceFor, priceOf, requestTokens } from '../core/stats/cost';
import { usageFrom, type AnswerCache, type ModelEndpoint } from '../core/llm/client';
import { anthropicUsage } from '../core/llm/providers/anthropicMessages';
import { batchApiOf, batchClient, type BatchEndpoint, type BatchLine } from '../core/llm/providers/batch';
import { endpointKey } from '../core/llm/providers/session';
import type { ResultsStore, StoredBatchLine, StoredJudgeBatch } from '../core/model/store';
import type { LlmCallRecord } from '../core/model/types';
import { requireRun, type ActivityDeps } from './deps';
import { withHeartbeat } from './heartbeat';
import type { BatchProgress } from '../contract/run';

/**
 * Batch judging (config `judge.batch`): the protocols' judge code runs unchanged, and every judge request it makes goes
 * through AnswerCache.batchReply. Preparing a batch, a request with no batch answer yet is taken as a batch line and
 * the item stops there (DeferredToBatch); once the batch is back, the same item runs again and the request is answered
 * from its result line, read exactly as a live reply. A protocol whose calls depend on earlier answers (a
 * CryptoAnalystBench conversation) so goes turn by turn across queries: every conversation's next turn in one batch.
 */

/** Thrown by a request taken as a batch line: its item waits for the batch. */
export class DeferredToBatch extends Error {
  constructor(readonly customId: string) {
    super(`request ${customId} waits for a batch`);
  }
}

/** Thrown by a request that must be asked live: its batch line failed or expired, or its endpoint has no Batch API. */
export class AskedLive extends Error {}

/** A request taken as a batch line, with what its cost record needs once it is answered. */
export interface PendingLine extends BatchLine {
  settings: ModelEndpoint;
  queryId: string;
  callName: string;
}

/**
 * The batch hook of one work item's judge calls. Its custom_id is the item's index and the request's key (the hash of
 * everything the judge is asked, unique per request of a run; Anthropic allows `^[a-zA-Z0-9_-]{1,64}$`). Replaying
 * (`lines` absent), a request without an answered line is asked live.
 */
export function batchReplies(
  store: ResultsStore,
  runId: string,
  item: { index: number; queryId: string; judge: string },
  lines?: Map<string, PendingLine>,
): NonNullable<AnswerCache['batchReply']> {
  return async (key, line, settings) => {
    const customId = `j${item.index}_${key}`;
    const held = await store.batchLine(runId, customId);
    if (held?.status === 'ok' && held.body) return held.body;
    if (!lines) return null;
    if (held && held.status !== 'submitted')
      throw new AskedLive(`its batch line ${customId} ${held.status}: ${held.error ?? ''}`);
    if (!batchApiOf(settings)) throw new AskedLive(`${settings.baseURL} has no Batch API judgeflow can use`);
    lines.set(customId, {
      customId,
      body: line(),
      settings,
      queryId: item.queryId,
      callName: item.judge || settings.model,
    });
    throw new DeferredToBatch(customId);
  };
}

/** What is left of the run's budget when a round is prepared (the workflow's look at the spend just before). */
export interface RoundBudget {
  usd?: number;
  tokens?: number;
}

/** One round's items: finished, asked live, waiting for a batch; the lines to submit; the price of what did not fit. */
export interface PreparedRound {
  done: Array<{ index: number; judged: number; failed: number }>;
  live: number[];
  deferred: number[];
  lines: PendingLine[];
  /** Nothing fitted what is left of the budget: the estimated price of the first item's lines (the run pauses). */
  overBudget?: { usd: number; tokens: number };
}

/**
 * Run a round's items until each needs a request no batch has answered (`judge`), taking those requests as lines.
 * With a budget the round is sized to what is left of it: each item's lines are priced before submit (requestTokens:
 * the prompt at ≈ 4 characters a token, the answer at the mean of the run's judge answers so far, at most max_tokens;
 * at the batch price, priceFor) and the first item that would pass what is left waits, with every later one, for a
 * later round (after a look at the spend). When not even the first fits, nothing is submitted and `overBudget` says
 * its price.
 */
export async function prepareRound(
  deps: ActivityDeps,
  runId: string,
  indices: number[],
  judge: (index: number, lines: Map<string, PendingLine>) => Promise<{ judged: number; failed: number }>,
  budget?: RoundBudget,
): Promise<PreparedRound> {
  const lines = new Map<string, PendingLine>();
  const round: PreparedRound = { done: [], live: [], deferred: [], lines: [] };
  const price = budget ? await linePricer(deps, runId) : undefined;
  const taken = { usd: 0, tokens: 0 };
  for (const [i, index] of indices.entries()) {
    const before = lines.size;
    try {
      round.done.push({ index, ...(await judge(index, lines)) });
    } catch (error) {
      if (error instanceof DeferredToBatch) round.deferred.push(index);
      else if (error instanceof AskedLive) round.live.push(index);
      else throw error;
    }
    if (!price || lines.size === before) continue;
    const added = [...lines.values()].slice(before);
    const cost = added.map(price).reduce((a, b) => ({ usd: a.usd + b.usd, tokens: a.tokens + b.tokens }));
    const fits =
      (budget!.usd === undefined || taken.usd + cost.usd <= budget!.usd) &&
      (budget!.tokens === undefined || taken.tokens + cost.tokens <= budget!.tokens);
    if (fits) {
      taken.usd += cost.usd;
      taken.tokens += cost.tokens;
      continue;
    }
    for (const line of added) lines.delete(line.customId);
    round.deferred.push(...indices.slice(i + 1));
    if (lines.size === 0) round.overBudget = cost;
    break;
  }
  round.lines = [...lines.values()];
  return round;
}

/** A line's estimated price and tokens before submit (see prepareRound), priced as the report will price its call. */
async function linePricer(
  deps: ActivityDeps,
  runId: string,
): Promise<(line: PendingLine) => { usd: number; tokens: number }> {
  const run = await requireRun(deps, runId);
  const calls = await deps.store.llmCalls(runId);
  const answers = new Map<string, number>();
  return (line) => {
    const model = line.settings.model;
    if (!answers.has(model)) answers.set(model, meanAnswerTokens(calls, model));
    const tokens = requestTokens(line.body, answers.get(model)!);
    return {
      usd: priceOf(priceFor(run.config.pricing, { model, name: line.callName, batch: true }), tokens) ?? 0,
      tokens: tokens.promptTokens + tokens.completionTokens,
    };
  };
}

/** OpenAI: 50,000 requests and 200 MB per batch file; Anthropic: 100,000 requests and 256 MB per batch. Kept under both. */
const MAX_LINES = 50_000;
const MAX_BYTES = 150 * 1024 * 1024;

/** What a submitted batch is, for the workflow: its key in the store and how many lines it holds. */
export interface SubmittedBatch {
  key: string;
  lines: number;
}

/**
 * The lines one round took, as batches: one per endpoint (the run's judge, a grounding judge of its own) and size cap,
 * each submitted once. The record goes to the store before the provider is asked, so a retried submit finds it: OpenAI's
 * batch is then found by its tag (metadata), and a batch with an id already is never submitted again.
 */
export async function submitLines(
  deps: ActivityDeps,
  runId: string,
  keyPrefix: string,
  lines: PendingLine[],
): Promise<SubmittedBatch[]> {
  const groups = new Map<string, PendingLine[]>();
  for (const line of [...lines].sort((a, b) => a.customId.localeCompare(b.customId))) {
    const group = endpointKey(line.settings);
    const members = groups.get(group);
    if (members) members.push(line);
    else groups.set(group, [line]);
  }
  const submitted: SubmittedBatch[] = [];
  const known = new Map((await deps.store.judgeBatches(runId)).map((b) => [b.key, b]));
  for (const chunk of [...groups.values()].flatMap(chunks)) {
    const key = `${keyPrefix}/${submitted.length + 1}`;
    const { settings } = chunk[0];
    // A batch call uploads a whole file: at least a minute, whatever one judge call may take.
    const endpoint = {
      baseURL: settings.baseURL,
      ...(settings.apiKeyEnv ? { apiKeyEnv: settings.apiKeyEnv } : {}),
      ...(settings.provider ? { provider: settings.provider } : {}),
      timeoutMs: Math.max(settings.timeoutMs, 60_000),
      model: settings.model,
    };
    const existing = known.get(key);
    if (!existing) {
      const record: StoredJudgeBatch = {
        runId,
        key,
        batchId: null,
        api: batchApiOf(settings)!,
        endpoint,
        state: 'submitting',
        counts: { total: chunk.length, succeeded: 0, failed: 0, pending: chunk.length },
        lines: chunk.length,
        createdAt: new Date().toISOString(),
      };
      await deps.store.putJudgeBatch(
        record,
        chunk.map(({ customId, queryId, callName }) => ({ customId, queryId, callName })),
      );
    }
    if (!existing?.batchId) await submitOnce(deps, runId, key, endpoint, chunk, existing, known);
    submitted.push({ key, lines: chunk.length });
  }
  return submitted;
}

/**
 * Submit one batch exactly once. Its record (the intent) is stored before the provider is asked; a retried submit whose
 * record has no batch id (the worker died while the create reply was in flight) first looks for the batch it made
 * (BatchClient.find) among those the run does not hold already: the oldest found is this one, any later ones are
 * duplicates, cancelled at once and recorded (`KEY/duplicate-N`, no lines) so the report lists every batch paid for.
 */
async function submitOnce(
  deps: ActivityDeps,
  runId: string,
  key: string,
  endpoint: BatchEndpoint & { model: string },
  chunk: PendingLine[],
  existing: StoredJudgeBatch | undefined,
  known: Map<string, StoredJudgeBatch>,
): Promise<void> {
  const client = batchClient(endpoint, deps.env);
  const lines = chunk.map(({ customId, body }) => ({ customId, body }));
  const held = new Set([...known.values()].map((b) => b.batchId).filter(Boolean));
  const made = existing
    ? (await client.find(lines, `${runId}/${key}`, Date.parse(existing.createdAt))).filter((b) => !held.has(b.id))
    : [];
  const status = made[0] ?? (await client.submit(lines, `${runId}/${key}`));
  await deps.store.updateJudgeBatch(runId, key, { batchId: status.id, state: status.state, counts: status.counts });
  for (const [i, duplicate] of made.slice(1).entries()) {
    const cancelled = await client.cancel(duplicate.id);
    const record: StoredJudgeBatch = {
      ...existing!,
      key: `${key}/duplicate-${i + 1}`,
      batchId: duplicate.id,
      state: cancelled.state,
      counts: cancelled.counts,
      lines: chunk.length,
    };
    // Its lines under ids of their own (never an answer to this run's requests): what it ran before the cancel is
    // billed, so it is counted once it ended (countDuplicateBatches), each line settled once with its call.
    await deps.store.putJudgeBatch(
      record,
      chunk.map(({ customId, queryId, callName }) => ({
        customId: duplicateLineId(customId, record.key),
        queryId,
        callName,
      })),
    );
    await deps.store.updateJudgeBatch(runId, record.key, {
      batchId: duplicate.id,
      state: cancelled.state,
      counts: cancelled.counts,
    });
  }
}

/** countDuplicateBatches where a provider's failing answer must not stop the run's own work: said, and tried again later. */
export async function countDuplicatesOrSay(deps: ActivityDeps, runId: string): Promise<void> {
  await countDuplicateBatches(deps, runId).catch((error) =>
    log.warn(
      `run ${runId}: the cost of a duplicate batch could not be read yet (counted at the next ingest or the report): ${error instanceof Error ? error.message : error}`,
    ),
  );
}

const DUPLICATE_KEY = /\/duplicate-\d+$/;
/** The store's id of a duplicate batch's line: the provider's custom_id, marked with the duplicate it came in. */
const duplicateLineId = (customId: string, duplicateKey: string) => `${customId}@${duplicateKey}`;

/**
 * The cost of every duplicate batch of the run that has ended at the provider (cancelled, or completed before the cancel
 * came): each line it answered is recorded as a batch call, once (its line settles once), so the cost table counts every
 * batch paid for. A duplicate still being cancelled is counted at a later call (each ingest, and the report).
 */
export async function countDuplicateBatches(deps: ActivityDeps, runId: string): Promise<number> {
  let counted = 0;
  for (const batch of (await deps.store.judgeBatches(runId)).filter((b) => DUPLICATE_KEY.test(b.key) && b.batchId)) {
    const lines = (await deps.store.batchLines(runId, batch.key)).filter((l) => l.status === 'submitted');
    if (!lines.length) continue;
    const client = clientOf(deps, batch);
    const status = await client.status(batch.batchId!);
    await deps.store.updateJudgeBatch(runId, batch.key, {
      batchId: batch.batchId,
      state: status.state,
      counts: status.counts,
    });
    if (!status.ended) continue;
    const byProviderId = new Map(lines.map((l) => [l.customId.slice(0, l.customId.length - batch.key.length - 1), l]));
    const results = await withHeartbeat(() => client.results(batch.batchId!, [...byProviderId.keys()]));
    const at = new Date().toISOString();
    const settled: Parameters<ResultsStore['settleBatchLines']>[1] = [];
    for (const result of results) {
      const line = byProviderId.get(result.customId);
      if (!line) continue;
      byProviderId.delete(result.customId);
      settled.push(
        result.ok
          ? {
              customId: line.customId,
              status: 'ok',
              body: null,
              error: null,
              call: callOf(batch, line, result.body, runId, at),
            }
          : { customId: line.customId, status: result.kind, body: null, error: result.error, call: null },
      );
    }
    for (const line of byProviderId.values())
      settled.push({
        customId: line.customId,
        status: 'expired',
        body: null,
        error: 'not run by the duplicate batch before it ended',
        call: null,
      });
    counted += await deps.store.settleBatchLines(runId, settled);
  }
  return counted;
}

function chunks(lines: PendingLine[]): PendingLine[][] {
  const out: PendingLine[][] = [];
  let bytes = 0;
  for (const line of lines) {
    const size = JSON.stringify(line.body).length + 200;
    if (!out.length || out[out.length - 1].length >= MAX_LINES || bytes + size > MAX_BYTES) {
      out.push([]);
      bytes = 0;
    }
    out[out.length - 1].push(line);
    bytes += size;
  }
  return out;
}

async function requireBatch(
  store: ResultsStore,
  runId: string,
  key: string,
): Promise<StoredJudgeBatch & { batchId: string }> {
  const batch = (await store.judgeBatches(runId)).find((b) => b.key === key);
  if (!batch?.batchId) throw new Error(`run ${runId} has no submitted judge batch ${key}`);
  return batch as StoredJudgeBatch & { batchId: string };
}

/** The providers' window (OpenAI's and Anthropic's 24 h) plus a margin for their finalizing: `judge.batchDeadlineHours`. */
export const DEFAULT_BATCH_DEADLINE_HOURS = 26;

/** When a stored batch passes its deadline (its record is stored just before the submit). */
const deadlineOf = (batch: StoredJudgeBatch, hours: number | undefined) =>
  Date.parse(batch.createdAt) + (hours ?? DEFAULT_BATCH_DEADLINE_HOURS) * 3_600_000;
const pastDeadline = (hours: number | undefined) =>
  `it had not ended ${hours ?? DEFAULT_BATCH_DEADLINE_HOURS} h after its submit (judge.batchDeadlineHours) and was cancelled`;

/**
 * The provider's word on one batch, kept in the store. A batch that has not ended by its deadline is cancelled at the
 * provider and counts as ended: its ingest asks every line it did not answer live.
 */
export async function pollBatch(
  deps: ActivityDeps,
  runId: string,
  key: string,
  deadlineHours?: number,
): Promise<BatchProgress> {
  const batch = await requireBatch(deps.store, runId, key);
  const client = clientOf(deps, batch);
  let status = await client.status(batch.batchId);
  let late: string | undefined;
  if (!status.ended && Date.now() > deadlineOf(batch, deadlineHours)) {
    status = await client.cancel(batch.batchId);
    late = pastDeadline(deadlineHours);
  }
  await deps.store.updateJudgeBatch(runId, key, { batchId: batch.batchId, state: status.state, counts: status.counts });
  const error = [status.error, late].filter(Boolean).join('; ');
  return {
    key,
    batchId: batch.batchId,
    lines: batch.lines,
    state: status.state,
    ended: status.ended || late !== undefined,
    counts: status.counts,
    ...(error ? { error } : {}),
  };
}

/**
 * An ended batch's results into the store, line by line by custom_id: an answered line with its call record (at the
 * batch price, core/stats/cost.ts), a failed one with the provider's words, and a line the provider never reported as
 * expired. Lines settled before are left alone, so a retried ingest stores and counts nothing twice. A batch past its
 * deadline that has still not ended (a cancel can take minutes) has its lines settled as expired: asked live.
 */
export async function ingestBatch(
  deps: ActivityDeps,
  runId: string,
  key: string,
  deadlineHours?: number,
): Promise<{ ok: number; failed: number }> {
  const batch = await requireBatch(deps.store, runId, key);
  const lines = await deps.store.batchLines(runId, key);
  const byId = new Map(lines.map((l) => [l.customId, l]));
  const client = clientOf(deps, batch);
  const late = Date.now() > deadlineOf(batch, deadlineHours) && !(await client.status(batch.batchId)).ended;
  const results = late
    ? []
    : await withHeartbeat(() =>
        client.results(
          batch.batchId,
          lines.map((l) => l.customId),
        ),
      );
  const at = new Date().toISOString();
  const settled: Parameters<ResultsStore['settleBatchLines']>[1] = [];
  const reported = new Set<string>();
  for (const result of results) {
    const line = byId.get(result.customId);
    if (!line || reported.has(result.customId)) continue; // not ours, or said twice: the first word stands
    reported.add(result.customId);
    if (result.ok)
      settled.push({
        customId: line.customId,
        status: 'ok',
        body: result.body,
        error: null,
        call: callOf(batch, line, result.body, runId, at),
      });
    else settled.push({ customId: line.customId, status: result.kind, body: null, error: result.error, call: null });
  }
  const unreported = late
    ? `the batch ${pastDeadline(deadlineHours)}`
    : 'the provider reported no result for this line';
  for (const line of lines)
    if (!reported.has(line.customId))
      settled.push({ customId: line.customId, status: 'expired', body: null, error: unreported, call: null });
  await deps.store.settleBatchLines(runId, settled);
  if (!DUPLICATE_KEY.test(key)) await countDuplicatesOrSay(deps, runId);
  const after = await deps.store.batchLines(runId, key);
  return { ok: after.filter((l) => l.status === 'ok').length, failed: after.filter((l) => l.status !== 'ok').length };
}

/** The cost record of an answered line: its usage as the result reports it, marked as a batch call. */
function callOf(
  batch: StoredJudgeBatch,
  line: StoredBatchLine,
  body: Record<string, unknown>,
  runId: string,
  at: string,
): LlmCallRecord {
  const usage = batch.api === 'anthropic' ? anthropicUsage(body.usage) : usageFrom(body.usage);
  return {
    runId,
    role: 'judge',
    name: line.callName,
    model: batch.endpoint.model,
    queryId: line.queryId,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    cachedTokens: usage.cachedTokens,
    latencyMs: 0,
    ok: true,
    errorKind: null,
    at,
    batch: true,
  };
}

/** `judgeflow cancel`: the run's batches still running are cancelled at the provider (what they answered stays billed). */
export async function cancelBatches(deps: ActivityDeps, runId: string, keys: string[]): Promise<void> {
  const batches = new Map((await deps.store.judgeBatches(runId)).map((b) => [b.key, b]));
  for (const key of keys) {
    const batch = batches.get(key);
    if (!batch?.batchId) continue;
    const status = await clientOf(deps, batch).cancel(batch.batchId);
    await deps.store.updateJudgeBatch(runId, key, {
      batchId: batch.batchId,
      state: status.state,
      counts: status.counts,
    });
  }
}

/** The Batch API client of the endpoint a stored batch was sent to (its key read from this worker's environment). */
function clientOf(deps: ActivityDeps, batch: StoredJudgeBatch) {
  return batchClient(batch.endpoint as BatchEndpoint, deps.env);
}
