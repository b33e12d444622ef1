// The simulator's options, request log and reply types: what its server, routes and profiles share (apart from sim/server.ts, so none of them imports the server back).
import type { RateLimiter, SimRateLimit } from './rateLimit';
import type { FailTools } from './world/tools';

/** The response header marking the simulator's answers, so a run it served is reported as SIMULATED whatever the config says. */
export const SIMULATED_HEADER = 'x-judgeflow-simulated';

export interface SimRequestLog {
  at: number;
  path: string;
  model: string;
  body: any;
  headers: Record<string, string | undefined>;
  /** The `usage` this server returned for the request (successful completions only), so tests can check reported token counts. */
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  /** The assistant content it answered with (successful completions only), so tests can recompute what a judge said. */
  content?: string;
  /** Set when the rate limit turned the request away (HTTP 429). */
  rateLimited?: boolean;
  /**
   * Set on a line a batch processed (path `/v1/batches` or `/v1/messages/batches`, never the live endpoint's path), so
   * tests tell live calls from batch-processed lines.
   */
  batch?: { id: string; customId: string };
  /**
   * Live chat and Responses calls: when the answer's last byte was handed to the socket (ms since the epoch, like
   * `at`), and the synchronous time spent parsing the request and building its answer (ms, `performance.now()`), so a
   * bench can tell the simulator's own time from its latency (client/benchSim.ts).
   */
  answeredAt?: number;
  workMs?: number;
}

/**
 * A simulated judge's character, chosen by the request's model name (SimOptions.judges): scores move by `leniency`
 * points, by `bonus` points for responses containing `favour.contains` (self-preference: a judge recognising its own
 * family's style), and by Gaussian noise of sd `noise` points drawn afresh for every request (seeded by request index),
 * so repeated samples of one unit differ. Without a profile a judge is deterministic: identical requests, identical answers.
 */
export interface SimJudgeProfile {
  noise?: number;
  leniency?: number;
  favour?: { contains: string; bonus: number };
  seed?: number;
}
export interface SimReply {
  status?: number;
  headers?: Record<string, string>;
  body?: string /* raw body, e.g. malformed JSON */;
  content?: string /* assistant message content */;
  /** Extra or overriding fields of the assistant message (refusal, tool_calls, annotations, content: null). */
  message?: Record<string, unknown>;
  /** The choice's finish_reason (default "stop"). */
  finishReason?: string;
  /** Extra top-level fields of the completion (citations, search_results). */
  extra?: Record<string, unknown>;
  /** A raw SSE body sent as it is to a streaming request (broken streams, error events). */
  stream?: string;
  /** Send the headers, then nothing for this long (a stalled proxy). */
  stallMs?: number;
}
export type SimHandler = (
  body: any,
  ctx: { requestIndex: number; log: SimRequestLog[] },
) => SimReply | string | undefined | Promise<SimReply | string | undefined>;
export interface SimOptions {
  port?: number; // 0 = random free port (default)
  host?: string; // default 127.0.0.1
  latencyMs?: number; // added delay before each reply
  handler?: SimHandler; // custom behaviour; return undefined to fall back to the default behaviour
  faults?: { rate429?: number; rate500?: number; rateMalformed?: number; retryAfterSeconds?: number; seed?: number }; // fractions 0..1, deterministic by request index + seed
  judges?: Record<string, SimJudgeProfile>; // judge model name -> its character (leniency, self-preference, noise)
  onRequest?: (entry: SimRequestLog) => void; // observe chat requests as they arrive (the CLI logs them)
  rateLimit?: SimRateLimit; // requests and tokens per minute: above them, 429 + Retry-After at once (no latency)
  /** Seconds from a batch's creation to its end (validating → in_progress → finalizing on the way); default 3. */
  batchSeconds?: number;
  /** Every Nth line of a batch fails with the provider's server error instead of being answered (0/undefined: none). */
  batchFailLines?: number;
  /** A batch processes only this many lines, then expires when its window (batchSeconds) ends; the rest are expired. */
  batchExpireAfterLines?: number;
  /** Every Nth line of a batch's results (OpenAI output file, Anthropic results) is written cut off: not JSON. */
  batchMalformedLines?: number;
  /** A batch stays in_progress past its window and never ends on its own (only a cancel ends it). */
  batchStuck?: boolean;
  /** The create call's reply leaves this long after the batch was created (the window in which a worker may die). */
  batchCreateReplyDelayMs?: number;
  /** The OpenAI batch list leaves out each batch's `metadata`, as some OpenAI-compatible hosts do. */
  batchListOmitsMetadata?: boolean;
  /** Tools of the simulated world made to fail (MCP at /mcp, HTTP at /tools/…): 'always', or the first n calls. */
  failTools?: FailTools;
  /** Headers every tool request (/mcp, /tools/…) must carry, with these values; 401 otherwise. */
  toolHeaders?: Record<string, string>;
}

export interface ChatContext {
  entry: SimRequestLog;
  requestIndex: number;
  options: SimOptions;
  log: SimRequestLog[];
  seenOnce: Set<string>;
  /** The live endpoint's rate limiter, charged for the tokens answered (batch lines have their own limits: none here). */
  limiter?: RateLimiter;
}
