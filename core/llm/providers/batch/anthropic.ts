/**
 * Anthropic's Message Batches: one create call carries every request ({custom_id, params}), the batch is polled until
 * its processing_status is "ended", and its results_url gives one JSONL line per request.
 * Reference: https://platform.claude.com/docs/en/api/creating-message-batches (retrieving-, canceling-message-batches,
 * retrieving-message-batch-results) and the guide https://platform.claude.com/docs/en/build-with-claude/batch-processing.
 *
 * A Message Batch has no metadata and the API takes no idempotency key: after a lost create reply, `find` lists the
 * batches created since the submit began (newest first, pages of 100) and keeps those holding as many requests; the
 * caller leaves out the ones it holds already. A batch so adopted that was not ours shows it once ended: none of its
 * results carries our custom_ids, and our lines are asked live.
 */
import { ANTHROPIC_VERSION, anthropicUrl } from '../anthropicMessages';
import { batchJson, batchRequest, jsonLines, malformedResults, unreported } from './http';
import type { BatchClient, BatchLine, BatchLineResult, BatchStatus } from './types';

/** Pages of the batch list `find` reads (100 batches each, newest first). */
const FIND_PAGES = 5;

export function anthropicBatchClient(baseURL: string, apiKey: string | undefined, timeoutMs: number): BatchClient {
  // Both headers on every request, as for /v1/messages (https://platform.claude.com/docs/en/api/overview).
  const headers: Record<string, string> = {
    'anthropic-version': ANTHROPIC_VERSION,
    'content-type': 'application/json',
    ...(apiKey ? { 'x-api-key': apiKey } : {}),
  };
  const url = (path: string) => anthropicUrl(baseURL, `/v1/messages/batches${path}`);
  const status = async (id: string) =>
    statusOf(await batchJson(url(`/${encodeURIComponent(id)}`), { method: 'GET', headers }, timeoutMs));
  return {
    async submit(lines: BatchLine[], _tag: string) {
      const requests = lines.map((l) => ({ custom_id: l.customId, params: l.body }));
      return statusOf(
        await batchJson(url(''), { method: 'POST', headers, body: JSON.stringify({ requests }) }, timeoutMs),
      );
    },
    async find(lines: BatchLine[], _tag: string, sinceMs: number) {
      const since = sinceMs - 60_000; // clock skew
      const made: any[] = [];
      let after: string | undefined;
      for (let page = 0; page < FIND_PAGES; page++) {
        const list = await batchJson(
          url(`?limit=100${after ? `&after_id=${encodeURIComponent(after)}` : ''}`),
          { method: 'GET', headers },
          timeoutMs,
        );
        const data: any[] = Array.isArray(list?.data) ? list.data : [];
        const recent = data.filter((b) => !(Date.parse(b?.created_at) < since));
        made.push(...recent.filter((b) => statusOf(b).counts.total === lines.length));
        if (!list?.has_more || recent.length < data.length || data.length === 0) break;
        after = String(list.last_id ?? data.at(-1).id);
      }
      return made
        .reverse()
        .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at))
        .map(statusOf);
    },
    status,
    async results(id: string, expected?: string[]) {
      const batch = await batchJson(url(`/${encodeURIComponent(id)}`), { method: 'GET', headers }, timeoutMs);
      const state = statusOf(batch);
      // results_url is null until processing ends.
      if (!state.ended || typeof batch.results_url !== 'string')
        throw new Error(
          `batch ${id} has not ended (processing_status ${batch?.processing_status}): its results are not there yet`,
        );
      const text = await batchRequest(batch.results_url, { method: 'GET', headers }, timeoutMs);
      const { lines, malformed } = jsonLines(text, `batch ${id} results`);
      const reported = [...lines.map(lineResult), ...malformedResults(malformed)];
      return [
        ...reported,
        ...unreported(
          reported,
          expected,
          state.state === 'cancelled' ? 'canceled' : 'expired',
          `batch ${id} ended without a result for this request`,
        ),
      ];
    },
    async cancel(id: string) {
      // "Batches may be canceled any time before processing ends"; the answer is the batch, canceling or ended.
      return statusOf(
        await batchJson(url(`/${encodeURIComponent(id)}/cancel`), { method: 'POST', headers }, timeoutMs),
      );
    },
  };
}

/**
 * processing_status in_progress | canceling | ended as the normalised state: an ended batch a cancel was asked for is
 * cancelled, one with expired requests expired, else completed. failed counts errored, canceled and expired requests.
 */
export function statusOf(batch: any): BatchStatus {
  const c = batch?.request_counts ?? {};
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const succeeded = n(c.succeeded);
  const failed = n(c.errored) + n(c.canceled) + n(c.expired);
  const pending = n(c.processing);
  const processing = batch?.processing_status;
  const state =
    processing === 'ended'
      ? batch.cancel_initiated_at
        ? 'cancelled'
        : n(c.expired) > 0
          ? 'expired'
          : 'completed'
      : processing === 'canceling'
        ? 'cancelling'
        : 'in_progress';
  return {
    id: String(batch?.id),
    state,
    ended: processing === 'ended',
    counts: { total: succeeded + failed + pending, succeeded, failed, pending },
  };
}

/** One results line: `{custom_id, result: {type: "succeeded", message} | {type: "errored", error: {type: "error", error: {type, message}}} | {type: "canceled"} | {type: "expired"}}`. */
function lineResult(line: any): BatchLineResult {
  const customId = String(line?.custom_id);
  const result = line?.result ?? {};
  if (result.type === 'succeeded' && result.message && typeof result.message === 'object')
    return { customId, ok: true, body: result.message };
  if (result.type === 'canceled')
    return { customId, ok: false, kind: 'canceled', error: 'the batch was canceled before this request was processed' };
  if (result.type === 'expired')
    return { customId, ok: false, kind: 'expired', error: 'the batch expired before this request was processed' };
  const inner = result.error?.error ?? result.error ?? {};
  return {
    customId,
    ok: false,
    kind: 'errored',
    error: `${typeof inner.type === 'string' ? `${inner.type}: ` : ''}${typeof inner.message === 'string' ? inner.message : JSON.stringify(result.error ?? result)}`,
  };
}
