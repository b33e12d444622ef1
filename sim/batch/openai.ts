/**
 * The simulator's OpenAI Batch API and the Files API it reads its input from, on the real wire protocol:
 *   POST /v1/files (multipart: purpose=batch, file=JSONL), GET /v1/files/{id}, GET /v1/files/{id}/content
 *   POST /v1/batches, GET /v1/batches/{id}, GET /v1/batches?limit=&after=, POST /v1/batches/{id}/cancel
 * References: OpenAI API reference, "Batch" (https://platform.openai.com/docs/api-reference/batch: the batch object,
 * the request input and output line shapes) and "Files" (https://platform.openai.com/docs/api-reference/files); the
 * Batch guide (https://platform.openai.com/docs/guides/batch: statuses, expiration, the error file).
 *
 * Every line is answered by `chatAnswer` (handed in by the server: BatchContext), the code of the live /v1/chat/completions (judges, schemas, profiles and
 * model-name faults included); a line it answers 4xx/5xx goes to the error file, it does not fail the batch.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson, type HttpAnswer } from '../http';
import { errorAnswer, sendError } from '../requests';
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

type BatchContext = BatchServerContext<{ openai: OpenAIBatches }>;

/** The only endpoint the simulator batches (the reference lists more: /v1/responses, /v1/embeddings, …). */
const CHAT_ENDPOINT = '/v1/chat/completions';
const FILE_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'];

interface StoredFile {
  id: string;
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  content: string;
}

interface StoredBatch {
  job: BatchJob;
  input_file_id: string;
  endpoint: string;
  completion_window: string;
  metadata: Record<string, string> | null;
  output_file_id: string | null;
  error_file_id: string | null;
}

export class OpenAIBatches {
  readonly files = new Map<string, StoredFile>();
  readonly batches = new Map<string, StoredBatch>();
  private serial = 0;
  nextId(prefix: string): string {
    return `${prefix}${String(++this.serial).padStart(6, '0')}${Math.random().toString(36).slice(2, 10)}`;
  }
}

/** Handle the request when it is one of the Files or Batch endpoints; false when it is not. */
export async function routeOpenAIBatches(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  path: string,
  ctx: BatchContext,
): Promise<boolean> {
  const store = ctx.batches.openai;
  const file = path.match(/^\/v1\/files\/([^/]+)(\/content)?$/);
  const batch = path.match(/^\/v1\/batches\/([^/]+)(\/cancel)?$/);
  if (req.method === 'POST' && path === '/v1/files') await uploadFile(req, res, store);
  else if (req.method === 'GET' && path === '/v1/files') sendJson(res, 200, listFiles(store, url.searchParams));
  else if (req.method === 'GET' && file) {
    const stored = store.files.get(file[1]);
    if (!stored) sendError(res, 404, `No such File object: ${file[1]}`, 'invalid_request_error', null, undefined, 'id');
    else if (file[2]) res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(stored.content);
    else sendJson(res, 200, fileObject(stored));
  } else if (req.method === 'POST' && path === '/v1/batches') await createBatch(req, res, store, ctx);
  else if (req.method === 'GET' && path === '/v1/batches')
    sendJson(res, 200, listBatches(store, url.searchParams, ctx.options.batchListOmitsMetadata === true));
  else if (batch && (req.method === 'GET' ? !batch[2] : req.method === 'POST' && batch[2])) {
    const stored = store.batches.get(batch[1]);
    if (!stored)
      sendError(res, 404, `No such Batch object: ${batch[1]}`, 'invalid_request_error', null, undefined, 'batch_id');
    else if (!batch[2]) sendJson(res, 200, batchObject(stored));
    // The reference: a batch "will be in status `cancelling` for up to 10 minutes, before changing to `cancelled`".
    else if (!cancelJob(stored.job))
      sendError(
        res,
        409,
        `Cannot cancel a batch with status '${batchObject(stored).status}'.`,
        'invalid_request_error',
        null,
      );
    else sendJson(res, 200, batchObject(stored));
  } else return false;
  return true;
}

async function uploadFile(req: IncomingMessage, res: ServerResponse, store: OpenAIBatches): Promise<void> {
  const raw = await readBody(req);
  let form: FormData;
  try {
    form = await new Request('http://sim/v1/files', {
      method: 'POST',
      headers: { 'content-type': req.headers['content-type'] ?? '' },
      body: new Uint8Array(raw),
    }).formData();
  } catch {
    return sendError(
      res,
      400,
      "The request must be multipart/form-data with a 'file' and a 'purpose'.",
      'invalid_request_error',
      null,
    );
  }
  const purpose = form.get('purpose');
  const file = form.get('file');
  if (typeof purpose !== 'string')
    return sendError(
      res,
      400,
      "Missing required parameter: 'purpose'.",
      'invalid_request_error',
      'missing_required_parameter',
      undefined,
      'purpose',
    );
  if (!FILE_PURPOSES.includes(purpose))
    return sendError(
      res,
      400,
      `Invalid value for 'purpose': '${purpose}'. Supported values are: ${FILE_PURPOSES.map((p) => `'${p}'`).join(', ')}.`,
      'invalid_request_error',
      'invalid_value',
      undefined,
      'purpose',
    );
  if (!file || typeof file === 'string')
    return sendError(
      res,
      400,
      "Missing required parameter: 'file'.",
      'invalid_request_error',
      'missing_required_parameter',
      undefined,
      'file',
    );
  const content = await file.text();
  const stored: StoredFile = {
    id: store.nextId('file-sim'),
    bytes: Buffer.byteLength(content),
    created_at: unix(Date.now()),
    filename: file.name || 'upload.jsonl',
    purpose,
    content,
  };
  store.files.set(stored.id, stored);
  sendJson(res, 200, fileObject(stored));
}

async function createBatch(
  req: IncomingMessage,
  res: ServerResponse,
  store: OpenAIBatches,
  ctx: BatchContext,
): Promise<void> {
  let body: any;
  try {
    body = JSON.parse((await readBody(req)).toString('utf8'));
  } catch {
    return sendError(
      res,
      400,
      'We could not parse the JSON body of your request.',
      'invalid_request_error',
      'invalid_json',
    );
  }
  const problem = createProblem(body, store);
  if (problem)
    return sendError(res, 400, problem.message, 'invalid_request_error', problem.code, undefined, problem.param);
  const stored: StoredBatch = {
    job: newJob(store.nextId('batch_sim'), [], 'validating', ctx.options),
    input_file_id: body.input_file_id,
    endpoint: body.endpoint,
    completion_window: body.completion_window,
    metadata: body.metadata ?? null,
    output_file_id: null,
    error_file_id: null,
  };
  store.batches.set(stored.job.id, stored);
  void runJob(
    stored.job,
    {
      validate: (job) => validateInput(job, store.files.get(stored.input_file_id)!.content, stored.endpoint),
      answer: (line, job) => answerLine(line, job, ctx),
      // What a line OpenAI failed on its side looks like in the error file: a 500 with its server_error body.
      failure: () =>
        errorAnswer(
          500,
          'The server had an error while processing your request. Sorry about that!',
          'server_error',
          null,
        ),
    },
    ctx.options,
    ctx.batches.clock,
  ).then(() => writeResultFiles(stored, store, ctx.options));
  await createReplyDelay(ctx.options, ctx.batches.clock);
  sendJson(res, 200, batchObject(stored));
}

function createProblem(
  body: any,
  store: OpenAIBatches,
): { message: string; code: string | null; param: string } | null {
  for (const param of ['input_file_id', 'endpoint', 'completion_window'])
    if (typeof body?.[param] !== 'string')
      return { message: `Missing required parameter: '${param}'.`, code: 'missing_required_parameter', param };
  const file = store.files.get(body.input_file_id);
  if (!file) return { message: `No such File object: ${body.input_file_id}`, code: null, param: 'input_file_id' };
  // The reference: the input file "must be uploaded with the purpose `batch`".
  if (file.purpose !== 'batch')
    return {
      message: `The input file ${file.id} must have purpose 'batch', not '${file.purpose}'.`,
      code: 'invalid_value',
      param: 'input_file_id',
    };
  if (body.endpoint !== CHAT_ENDPOINT)
    return {
      message: `Invalid value for 'endpoint': '${body.endpoint}'. The simulator batches '${CHAT_ENDPOINT}' only.`,
      code: 'invalid_value',
      param: 'endpoint',
    };
  // "Currently only `24h` is supported."
  if (body.completion_window !== '24h')
    return {
      message: `Invalid value for 'completion_window': '${body.completion_window}'. Supported values are: '24h'.`,
      code: 'invalid_value',
      param: 'completion_window',
    };
  // Metadata: "Set of 16 key-value pairs … Keys are strings with a maximum length of 64 characters. Values are strings with a maximum length of 512 characters."
  if (body.metadata !== undefined && body.metadata !== null) {
    const entries =
      typeof body.metadata === 'object' && !Array.isArray(body.metadata) ? Object.entries(body.metadata) : null;
    if (
      !entries ||
      entries.length > 16 ||
      entries.some(([k, v]) => k.length > 64 || typeof v !== 'string' || v.length > 512)
    )
      return {
        message:
          "Invalid 'metadata': at most 16 pairs of string keys (up to 64 characters) and string values (up to 512 characters).",
        code: 'invalid_value',
        param: 'metadata',
      };
  }
  return null;
}

/**
 * The checks of the validating phase, each error `{code, message, param, line}` as the batch object's `errors.data`
 * carries them. The line shape is the reference's "request input object": `{custom_id, method: "POST", url, body}`;
 * the Batch guide: custom_id must be unique in the file, and "each input file can only include requests to a single model".
 */
function validateInput(job: BatchJob, content: string, endpoint: string): unknown[] {
  const errors: unknown[] = [];
  const seen = new Set<string>();
  let model: string | undefined;
  const error = (line: number, code: string, message: string, param: string | null = null) =>
    errors.push({ code, message, param, line });
  const texts = content.split('\n');
  for (const [i, text] of texts.entries()) {
    if (text.trim() === '') continue;
    const line = i + 1;
    let parsed: any;
    try {
      parsed = JSON.parse(text);
    } catch {
      error(line, 'invalid_json_line', 'This line is not parseable as valid JSON.');
      continue;
    }
    if (typeof parsed?.custom_id !== 'string' || parsed.custom_id === '')
      error(line, 'missing_required_parameter', "Missing required parameter: 'custom_id'.", 'custom_id');
    else if (seen.has(parsed.custom_id))
      error(
        line,
        'duplicate_custom_id',
        'The custom_id for this request is a duplicate of another request. The custom_id parameter must be unique for each request in a batch.',
        'custom_id',
      );
    else if (parsed.method !== 'POST')
      error(
        line,
        'invalid_value',
        `Invalid value for 'method': '${parsed.method}'. Only 'POST' is supported.`,
        'method',
      );
    else if (parsed.url !== endpoint)
      error(
        line,
        'invalid_url',
        `The URL provided for this request does not match the batch endpoint '${endpoint}'.`,
        'url',
      );
    else if (!parsed.body || typeof parsed.body !== 'object' || Array.isArray(parsed.body))
      error(line, 'missing_required_parameter', "Missing required parameter: 'body'.", 'body');
    else if (model !== undefined && parsed.body.model !== model)
      error(
        line,
        'mismatched_model',
        `The provided model '${parsed.body.model}' does not match the model '${model}' of the other requests in this batch.`,
        'body.model',
      );
    else {
      model = parsed.body.model;
      seen.add(parsed.custom_id);
      job.lines.push({ customId: parsed.custom_id, body: parsed.body });
    }
  }
  if (errors.length === 0 && job.lines.length === 0)
    errors.push({ code: 'empty_file', message: 'The batch input file is empty.', param: null, line: null });
  return errors;
}

/** One line through the live endpoint's code, logged with path `/v1/batches` (not /v1/chat/completions) and its batch. */
function answerLine(line: BatchLine, job: BatchJob, ctx: BatchContext): Promise<HttpAnswer> {
  const { entry, requestIndex } = logLine('/v1/batches', line, job, ctx);
  return ctx.chatAnswer(line.body, { entry, requestIndex, options: ctx.options, log: ctx.log, seenOnce: ctx.seenOnce });
}

/**
 * The output file holds the lines answered 2xx, the error file every other: `{id, custom_id, response: {status_code,
 * request_id, body}, error: null}` (the reference's "request output object"); an expired line has `response: null,
 * error: {code: "batch_expired", …}` (the Batch guide, "Batch expiration"). A file with no line is not created.
 */
function writeResultFiles(stored: StoredBatch, store: OpenAIBatches, options: BatchContext['options']): void {
  const output: string[] = [];
  const errors: string[] = [];
  for (const [i, outcome] of stored.job.outcomes.entries()) {
    const line = outputLine(outcome, `batch_req_${stored.job.id.slice(6)}_${i}`);
    if (line)
      (outcome.kind === 'answered' && outcome.answer.status < 300 ? output : errors).push(
        writtenLine(JSON.stringify(line), i, options),
      );
  }
  const save = (lines: string[], name: string): string | null => {
    if (lines.length === 0) return null;
    const content = `${lines.join('\n')}\n`;
    const file: StoredFile = {
      id: store.nextId('file-sim'),
      bytes: Buffer.byteLength(content),
      created_at: unix(Date.now()),
      filename: `${stored.job.id}_${name}.jsonl`,
      purpose: 'batch_output',
      content,
    };
    store.files.set(file.id, file);
    return file.id;
  };
  stored.output_file_id = save(output, 'output');
  stored.error_file_id = save(errors, 'error');
}

function outputLine(outcome: LineOutcome, id: string): unknown {
  if (outcome.kind === 'expired')
    return {
      id,
      custom_id: outcome.customId,
      response: null,
      error: {
        code: 'batch_expired',
        message: 'This request could not be executed before the completion window expired.',
      },
    };
  // Lines a cancel stopped before they ran are in neither file (only what ran is reported).
  if (outcome.kind !== 'answered') return null;
  let body: unknown;
  try {
    body = JSON.parse(outcome.answer.body);
  } catch {
    body = outcome.answer.body;
  }
  return {
    id,
    custom_id: outcome.customId,
    response: {
      status_code: outcome.answer.status,
      request_id: outcome.answer.headers['x-request-id'] ?? `req_sim_${id}`,
      body,
    },
    error: null,
  };
}

/** The batch object of the reference, statuses validating → in_progress → finalizing → completed, or failed, expired, cancelling → cancelled. */
function batchObject(stored: StoredBatch): Record<string, unknown> {
  const { job } = stored;
  const counts = countOutcomes(job);
  const status = job.phase === 'ended' ? job.ending! : job.at.cancelling ? 'cancelling' : job.phase;
  const ended = job.phase === 'ended';
  const at = (ms: number | undefined) => (ms === undefined ? null : unix(ms));
  return {
    id: job.id,
    object: 'batch',
    endpoint: stored.endpoint,
    errors: job.errors ? { object: 'list', data: job.errors } : null,
    input_file_id: stored.input_file_id,
    completion_window: stored.completion_window,
    status,
    output_file_id: ended ? stored.output_file_id : null,
    error_file_id: ended ? stored.error_file_id : null,
    created_at: unix(job.at.created),
    in_progress_at: at(job.at.in_progress),
    expires_at: unix(job.at.expires),
    finalizing_at: at(job.at.finalizing),
    completed_at: job.ending === 'completed' ? at(job.at.ended) : null,
    failed_at: job.ending === 'failed' ? at(job.at.ended) : null,
    expired_at: job.ending === 'expired' ? at(job.at.ended) : null,
    cancelling_at: at(job.at.cancelling),
    cancelled_at: job.ending === 'cancelled' ? at(job.at.ended) : null,
    request_counts: { total: job.lines.length, completed: counts.succeeded, failed: counts.errored + counts.expired },
    metadata: stored.metadata,
  };
}

/** The list of the reference: newest first, `after` a batch id to page from, `limit` 1–100 (default 20). */
function listBatches(store: OpenAIBatches, query: URLSearchParams, omitMetadata: boolean): Record<string, unknown> {
  const all = [...store.batches.values()].reverse();
  const after = query.get('after');
  const from = after ? all.findIndex((b) => b.job.id === after) + 1 : 0;
  const limit = Math.min(100, Math.max(1, Number(query.get('limit') ?? 20) || 20));
  // An OpenAI-compatible host whose list leaves metadata out (SimOptions.batchListOmitsMetadata).
  const page = all
    .slice(from, from + limit)
    .map((b) => (omitMetadata ? { ...batchObject(b), metadata: undefined } : batchObject(b)));
  return {
    object: 'list',
    data: page,
    first_id: (page[0]?.id as string) ?? null,
    last_id: (page.at(-1)?.id as string) ?? null,
    has_more: from + limit < all.length,
  };
}

/** The Files list of the reference: `purpose` filters, `order` by created_at (default desc), `after` a file id, `limit` 1–10,000 (default 10,000). */
function listFiles(store: OpenAIBatches, query: URLSearchParams): Record<string, unknown> {
  const purpose = query.get('purpose');
  const ascending = [...store.files.values()].filter((f) => !purpose || f.purpose === purpose);
  const all = query.get('order') === 'asc' ? ascending : ascending.reverse();
  const after = query.get('after');
  const from = after ? all.findIndex((f) => f.id === after) + 1 : 0;
  const limit = Math.min(10_000, Math.max(1, Number(query.get('limit') ?? 10_000) || 10_000));
  const page = all.slice(from, from + limit).map(fileObject);
  return {
    object: 'list',
    data: page,
    first_id: (page[0]?.id as string) ?? null,
    last_id: (page.at(-1)?.id as string) ?? null,
    has_more: from + limit < all.length,
  };
}

function fileObject(file: StoredFile): Record<string, unknown> {
  return {
    id: file.id,
    object: 'file',
    bytes: file.bytes,
    created_at: file.created_at,
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed',
    status_details: null,
    expires_at: null,
  };
}

function unix(ms: number): number {
  return Math.floor(ms / 1000);
}
