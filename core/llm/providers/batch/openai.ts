/**
 * OpenAI's Batch API (and every provider serving its protocol, e.g. Groq): the lines go up as one JSONL file (Files API,
 * purpose `batch`), the batch is created on it for /v1/chat/completions with a 24h window, and its output and error
 * files are read once it ended.
 * References: OpenAI API reference, "Batch" (https://platform.openai.com/docs/api-reference/batch) and "Files"
 * (https://platform.openai.com/docs/api-reference/files); the Batch guide (https://platform.openai.com/docs/guides/batch).
 */
import { providerErrorMessage } from '../errorBody';
import { ProviderHttpError } from '../httpError';
import { batchJson, batchRequest, jsonLines, malformedResults, unreported } from './http';
import type { BatchClient, BatchLine, BatchLineResult, BatchState, BatchStatus } from './types';

/** The metadata key a batch's tag is stored under (the reference: metadata keys up to 64 characters, values up to 512). */
export const TAG_KEY = 'judgeflow_tag';
/** How many of the most recent batches a submit looks through for one with its tag (pages of 100, newest first). */
const TAG_SEARCH_PAGES = 5;
const ENDED: BatchState[] = ['completed', 'failed', 'expired', 'cancelled'];

export function openaiBatchClient(baseURL: string, apiKey: string | undefined, timeoutMs: number): BatchClient {
  const base = baseURL.replace(/\/+$/, '');
  const auth: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  const get = (path: string) =>
    batchJson(`${base}${path}`, { method: 'GET', headers: { accept: 'application/json', ...auth } }, timeoutMs);
  const post = (path: string, body?: unknown) =>
    batchJson(
      `${base}${path}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...auth },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      },
      timeoutMs,
    );
  const fileText = (id: string) =>
    batchRequest(`${base}/files/${encodeURIComponent(id)}/content`, { method: 'GET', headers: auth }, timeoutMs);
  const status = async (id: string) => statusOf(await get(`/batches/${encodeURIComponent(id)}`));

  return {
    async submit(lines: BatchLine[], tag: string) {
      if (tag.length > 512)
        throw new Error(
          `batch tag longer than 512 characters (OpenAI's limit for a metadata value): ${tag.slice(0, 40)}…`,
        );
      // An upload whose batch was never created (the worker died between the two) is used, not sent again.
      const uploaded = (await filesNamed(get, fileNameOf(tag)))[0];
      // One request per line: {custom_id, method: "POST", url, body} (the reference's "request input object").
      const jsonl = lines
        .map((l) =>
          JSON.stringify({ custom_id: l.customId, method: 'POST', url: '/v1/chat/completions', body: l.body }),
        )
        .join('\n');
      const form = new FormData();
      form.append('purpose', 'batch');
      form.append('file', new Blob([`${jsonl}\n`], { type: 'application/jsonl' }), fileNameOf(tag));
      const fileId =
        uploaded?.id ?? (await batchJson(`${base}/files`, { method: 'POST', headers: auth, body: form }, timeoutMs)).id;
      // "Currently only `24h` is supported" for completion_window.
      return statusOf(
        await post('/batches', {
          input_file_id: fileId,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
          metadata: { [TAG_KEY]: tag },
        }),
      );
    },
    async find(_lines: BatchLine[], tag: string, sinceMs: number) {
      const recent = await recentBatches(get, sinceMs);
      let made = recent.filter((b) => b?.metadata?.[TAG_KEY] === tag);
      if (!made.length) {
        const files = new Set((await filesNamed(get, fileNameOf(tag))).map((f) => f.id));
        made = recent.filter((b) => files.has(b?.input_file_id));
      }
      // The list is newest first; created_at has whole seconds, so ties keep the list's order, reversed.
      return made
        .reverse()
        .sort((a, b) => Number(a.created_at) - Number(b.created_at))
        .map(statusOf);
    },
    status,
    async results(id: string, expected?: string[]) {
      const batch = await get(`/batches/${encodeURIComponent(id)}`);
      const state = statusOf(batch);
      if (!state.ended)
        throw new Error(`batch ${id} has not ended (state ${state.state}): its results are not there yet`);
      const reported: BatchLineResult[] = [];
      for (const fileId of [batch.output_file_id, batch.error_file_id]) {
        if (typeof fileId !== 'string' || !fileId) continue;
        const { lines, malformed } = jsonLines(await fileText(fileId), `batch ${id} file ${fileId}`);
        reported.push(...lines.map(lineResult), ...malformedResults(malformed));
      }
      // Lines in neither file: expired ones are in the error file (code batch_expired, the guide's "Batch expiration"); a
      // cancelled batch reports only the lines that ran.
      return [
        ...reported,
        ...unreported(
          reported,
          expected,
          state.state === 'cancelled' ? 'canceled' : 'expired',
          `batch ${id} ended (${state.state}) without reporting this line`,
        ),
      ];
    },
    async cancel(id: string) {
      try {
        return statusOf(await post(`/batches/${encodeURIComponent(id)}/cancel`));
      } catch (error) {
        // A batch that ended already cannot be cancelled (409 "Cannot cancel a batch with status …"): its status is the answer.
        if (error instanceof ProviderHttpError && error.status === 409) return status(id);
        throw error;
      }
    },
  };
}

/** The input file's name: the tag, made safe (a metadata-less list finds the batch by it). */
const fileNameOf = (tag: string) => `${tag.replace(/[^\w.-]+/g, '_').slice(0, 100)}.jsonl`;

/** Batches created since `sinceMs` (less a minute of clock skew), newest first, among the last TAG_SEARCH_PAGES pages. */
async function recentBatches(get: (path: string) => Promise<any>, sinceMs: number): Promise<any[]> {
  const since = Math.floor(sinceMs / 1000) - 60;
  const out: any[] = [];
  let after: string | undefined;
  for (let page = 0; page < TAG_SEARCH_PAGES; page++) {
    const list = await get(`/batches?limit=100${after ? `&after=${encodeURIComponent(after)}` : ''}`);
    const data: any[] = Array.isArray(list?.data) ? list.data : [];
    out.push(...data.filter((b) => !(Number(b?.created_at) < since)));
    if (!list?.has_more || data.length === 0 || data.some((b) => Number(b?.created_at) < since)) break;
    after = String(list.last_id ?? data.at(-1).id);
  }
  return out;
}

/** Files of purpose `batch` with this name, newest first (one page: the Files list's default limit is 10,000). */
async function filesNamed(get: (path: string) => Promise<any>, name: string): Promise<Array<{ id: string }>> {
  const list = await get('/files?purpose=batch&order=desc');
  return (Array.isArray(list?.data) ? list.data : []).filter(
    (f: any) => f?.filename === name && typeof f.id === 'string',
  );
}

/**
 * The batch object's status as is (the reference: validating, failed, in_progress, finalizing, completed, expired,
 * cancelling, cancelled). Once it ended every line not succeeded counts as failed (a cancelled batch's unprocessed
 * lines included), so total = succeeded + failed + pending always.
 */
export function statusOf(batch: any): BatchStatus {
  const state = batch?.status as BatchState;
  const ended = ENDED.includes(state);
  const total = Number(batch?.request_counts?.total ?? 0);
  const succeeded = Number(batch?.request_counts?.completed ?? 0);
  const failed = ended ? Math.max(0, total - succeeded) : Number(batch?.request_counts?.failed ?? 0);
  const errors: any[] = Array.isArray(batch?.errors?.data) ? batch.errors.data : [];
  const error = errors
    .map((e) => `${e.line ? `line ${e.line}: ` : ''}${e.code ? `${e.code}: ` : ''}${e.message ?? ''}`.trim())
    .join('; ');
  return {
    id: String(batch?.id),
    state,
    ended,
    counts: { total, succeeded, failed, pending: ended ? 0 : Math.max(0, total - succeeded - failed) },
    ...(error ? { error } : {}),
  };
}

/**
 * One line of the output or error file (the reference's "request output object": `{id, custom_id, response:
 * {status_code, request_id, body}, error}`): a 2xx response is the completion; another status is the live endpoint's
 * refusal in its words; `error` (no response) is a failure outside HTTP, `batch_expired` when the window ran out.
 */
function lineResult(line: any): BatchLineResult {
  const customId = String(line?.custom_id);
  const status = Number(line?.response?.status_code);
  if (line?.response && status >= 200 && status < 300 && line.response.body && typeof line.response.body === 'object')
    return { customId, ok: true, body: line.response.body };
  if (line?.error)
    return {
      customId,
      ok: false,
      kind: line.error.code === 'batch_expired' ? 'expired' : 'errored',
      error: `${line.error.code ? `${line.error.code}: ` : ''}${line.error.message ?? ''}`.trim(),
    };
  const words = providerErrorMessage(
    typeof line?.response?.body === 'string' ? line.response.body : JSON.stringify(line?.response?.body ?? ''),
  );
  return {
    customId,
    ok: false,
    kind: 'errored',
    error: `HTTP ${Number.isFinite(status) ? status : '?'}${words ? `: ${words}` : ''}`,
  };
}
