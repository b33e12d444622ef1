/**
 * The simulator's Anthropic Message Batches API, on the real wire protocol:
 *   POST /v1/messages/batches, GET /v1/messages/batches/{id}, GET /v1/messages/batches?limit=&after_id=,
 *   GET /v1/messages/batches/{id}/results (the batch's results_url), POST /v1/messages/batches/{id}/cancel
 * Reference: https://platform.claude.com/docs/en/api/creating-message-batches (and retrieving-, listing-, canceling-
 * message-batches, retrieving-message-batch-results); the guide https://platform.claude.com/docs/en/build-with-claude/batch-processing.
 *
 * Both headers are required as on /v1/messages. The create call checks only the envelope (custom_id pattern and
 * uniqueness); each request's `params` is checked when it is processed, by `messagesAnswer` — the code of the live
 * /v1/messages — so a request the live endpoint refuses is an `errored` result, not a refused batch (the guide: "Validation
 * of params … happens asynchronously").
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { jsonAnswer, readBody, writeAnswer, type HttpAnswer } from '../http';
import { anthropicError, headerProblem, messagesAnswer } from '../anthropic';
import {
  cancelJob,
  countOutcomes,
  createReplyDelay,
  logLine,
  newJob,
  runJob,
  writtenLine,
  type BatchJob,
  type BatchLine,
  type LineOutcome,
  type BatchServerContext,
} from './engine';

type BatchContext = BatchServerContext<{ anthropic: AnthropicBatches }>;

/** The create reference: custom_id "must be unique for each request within the Message Batch", pattern ^[a-zA-Z0-9_-]{1,64}$. */
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

export class AnthropicBatches {
  readonly batches = new Map<string, BatchJob>();
  private serial = 0;
  nextId(): string {
    return `msgbatch_sim${String(++this.serial).padStart(6, '0')}${Math.random().toString(36).slice(2, 10)}`;
  }
}

/** Handle the request when it is one of the Message Batches endpoints; false when it is not. */
export async function routeAnthropicBatches(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  path: string,
  ctx: BatchContext,
): Promise<boolean> {
  const one = path.match(/^\/v1\/messages\/batches\/([^/]+)(\/results|\/cancel)?$/);
  if (path !== '/v1/messages/batches' && !one) return false;
  const store = ctx.batches.anthropic;
  const refused = headerProblem(req);
  if (refused) {
    writeAnswer(res, refused);
    return true;
  }
  const origin = `http://${req.headers.host ?? 'localhost'}`;
  if (req.method === 'POST' && path === '/v1/messages/batches')
    writeAnswer(res, await createBatch(req, store, ctx, origin));
  else if (req.method === 'GET' && path === '/v1/messages/batches')
    writeAnswer(res, jsonAnswer(200, listBatches(store, url.searchParams, origin)));
  else if (one && ((req.method === 'GET' && one[2] !== '/cancel') || (req.method === 'POST' && one[2] === '/cancel'))) {
    const job = store.batches.get(one[1]);
    if (!job) writeAnswer(res, anthropicError(404, 'not_found_error', `Message Batch ${one[1]} not found.`));
    else if (one[2] === '/results') writeAnswer(res, results(job, ctx.options));
    else {
      // "Batches may be canceled any time before processing ends"; an ended batch stays as it is.
      if (one[2] === '/cancel') cancelJob(job);
      writeAnswer(res, jsonAnswer(200, batchObject(job, origin)));
    }
  } else
    writeAnswer(res, anthropicError(405, 'invalid_request_error', `Method ${req.method} is not allowed for ${path}.`));
  return true;
}

async function createBatch(
  req: IncomingMessage,
  store: AnthropicBatches,
  ctx: BatchContext,
  origin: string,
): Promise<HttpAnswer> {
  let body: any;
  try {
    body = JSON.parse((await readBody(req)).toString('utf8'));
  } catch {
    return anthropicError(
      400,
      'invalid_request_error',
      'There was an issue with the format or content of your request: the body is not valid JSON.',
    );
  }
  const problem = envelopeProblem(body);
  if (problem) return anthropicError(400, 'invalid_request_error', problem);
  const lines: BatchLine[] = body.requests.map((r: any) => ({ customId: r.custom_id, body: r.params }));
  const job = newJob(store.nextId(), lines, 'in_progress', ctx.options);
  store.batches.set(job.id, job);
  void runJob(
    job,
    {
      answer: (line) => answerLine(line, job, ctx),
      // A request Anthropic failed on its side: the 500 api_error of the errors page.
      failure: () => anthropicError(500, 'api_error', 'Internal server error'),
    },
    ctx.options,
    ctx.batches.clock,
  );
  await createReplyDelay(ctx.options, ctx.batches.clock);
  return jsonAnswer(200, batchObject(job, origin));
}

/** The first rule of the create call's envelope the body breaks, in the validation wording of the Messages API. */
function envelopeProblem(body: any): string | null {
  if (!Array.isArray(body?.requests)) return 'requests: Field required';
  if (body.requests.length === 0) return 'requests: List should have at least 1 item after validation, not 0';
  const seen = new Set<string>();
  for (const [i, request] of (body.requests as any[]).entries()) {
    if (typeof request?.custom_id !== 'string') return `requests.${i}.custom_id: Field required`;
    if (!CUSTOM_ID.test(request.custom_id))
      return `requests.${i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`;
    if (seen.has(request.custom_id))
      return `requests.${i}.custom_id: Duplicate custom_id "${request.custom_id}"; custom_id must be unique for each request within the Message Batch`;
    seen.add(request.custom_id);
    if (!request.params || typeof request.params !== 'object' || Array.isArray(request.params))
      return `requests.${i}.params: Field required`;
  }
  return null;
}

/** One request through the live /v1/messages code, logged with path `/v1/messages/batches` and its batch. */
function answerLine(line: BatchLine, job: BatchJob, ctx: BatchContext): Promise<HttpAnswer> {
  const { entry, requestIndex } = logLine('/v1/messages/batches', line, job, ctx);
  return messagesAnswer(line.body, { entry, requestIndex, options: ctx.options, log: ctx.log });
}

/** The results JSONL, one line per request: `{custom_id, result: {type: succeeded, message} | {type: errored, error} | {type: canceled} | {type: expired}}`. */
function results(job: BatchJob, options: BatchContext['options']): HttpAnswer {
  // results_url is null until processing ends ("Results … are available once processing ends").
  if (job.phase !== 'ended')
    return anthropicError(
      400,
      'invalid_request_error',
      `Message Batch ${job.id} has not yet ended; its results are available once processing_status is "ended".`,
    );
  const body = job.outcomes
    .map((o, i) => writtenLine(JSON.stringify({ custom_id: o.customId, result: resultOf(o) }), i, options))
    .join('\n');
  return { status: 200, headers: { 'content-type': 'application/binary' }, body: body ? `${body}\n` : '' };
}

function resultOf(outcome: LineOutcome): unknown {
  if (outcome.kind !== 'answered') return { type: outcome.kind };
  let body: unknown;
  try {
    body = JSON.parse(outcome.answer.body);
  } catch {
    body = { type: 'error', error: { type: 'api_error', message: outcome.answer.body } };
  }
  // The errored result's `error` is the error response the live call would have had: {type: "error", error: {type, message}}.
  return outcome.answer.status < 300 ? { type: 'succeeded', message: body } : { type: 'errored', error: body };
}

/** The Message Batch object: processing_status in_progress | canceling | ended, request_counts, RFC 3339 times, results_url once ended. */
function batchObject(job: BatchJob, origin: string): Record<string, unknown> {
  const counts = countOutcomes(job);
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  const ended = job.phase === 'ended';
  return {
    id: job.id,
    type: 'message_batch',
    processing_status: ended ? 'ended' : job.at.cancelling ? 'canceling' : 'in_progress',
    request_counts: {
      processing: counts.processing,
      succeeded: counts.succeeded,
      errored: counts.errored,
      canceled: counts.canceled,
      expired: counts.expired,
    },
    ended_at: iso(job.at.ended),
    created_at: iso(job.at.created),
    expires_at: iso(job.at.expires),
    archived_at: null,
    cancel_initiated_at: iso(job.at.cancelling),
    results_url: ended ? `${origin}/v1/messages/batches/${job.id}/results` : null,
  };
}

/** The list reference: newest first, `after_id` / `before_id` to page on, `limit` 1–1000 (default 20). */
function listBatches(store: AnthropicBatches, query: URLSearchParams, origin: string): Record<string, unknown> {
  const all = [...store.batches.values()].reverse();
  const after = query.get('after_id');
  const before = query.get('before_id');
  const limit = Math.min(1000, Math.max(1, Number(query.get('limit') ?? 20) || 20));
  const end = before
    ? Math.max(
        0,
        all.findIndex((b) => b.id === before),
      )
    : all.length;
  const from = after ? all.findIndex((b) => b.id === after) + 1 : before ? Math.max(0, end - limit) : 0;
  const to = Math.min(end, from + limit);
  const page = all.slice(from, to).map((b) => batchObject(b, origin));
  // has_more: "if there are more results in the requested page direction".
  const hasMore = before ? from > 0 : to < all.length;
  return {
    data: page,
    has_more: hasMore,
    first_id: (page[0]?.id as string) ?? null,
    last_id: (page.at(-1)?.id as string) ?? null,
  };
}
