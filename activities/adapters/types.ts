import type { z } from 'zod';
import type { AnswerSource, Query } from '../../core/model/types';
import type { RateLimitInfo } from '../../core/llm/client';
import type { ResultsStore } from '../../core/model/store';

/** Why a collection failed; stored with the response and shown in reports. */
export type AdapterErrorKind =
  | 'timeout'
  | 'http'
  | 'rate_limited'
  | 'selector'
  | 'invalid_reply'
  | 'missing'
  | 'config'
  | 'network'
  | 'browser'
  /** A 400 naming a request parameter the model does not accept (e.g. temperature on reasoning models). */
  | 'unsupported_parameter'
  /** Out of credit or over a spend limit (HTTP 429 insufficient_quota, 402): never retried. */
  | 'quota'
  /** The answer is incomplete: cut off (finish_reason length), filtered, a stream that ended early or reported an error. */
  | 'incomplete'
  /** The model answered with a tool call instead of text. */
  | 'tool_call'
  /** The run was cancelled while the call was in flight. */
  | 'cancelled'
  /** The results store stayed locked by another process (transient; never recorded as the item's failure). */
  | 'store_busy'
  /** An agent copilot's tool kept failing (limits.maxToolErrors results in a row were errors). */
  | 'tool'
  /** An agent copilot reached a limit (maxSteps, wallSeconds) without a final answer. */
  | 'agent_limit'
  /** A replayed world snapshot holds no result for a tool call the agent made (tools.onMissing: fail). */
  | 'world_miss'
  /** Anything unrecognised: a bug, not a provider fault, so it is not retried. */
  | 'internal';

/** Error thrown by adapters. `retryable` decides whether the activity asks Temporal for another attempt. */
export class AdapterError extends Error {
  constructor(
    readonly kind: AdapterErrorKind,
    message: string,
    readonly options: {
      retryable?: boolean;
      retryAfterMs?: number;
      /** Where the failure screenshot is: `artefact:<id>` in the results store (`judgeflow artefacts RUN`). */
      screenshot?: string;
      raw?: string;
      status?: number;
    } = {},
  ) {
    super(message);
    this.name = 'AdapterError';
  }
  get retryable(): boolean {
    return this.options.retryable ?? false;
  }
}

export interface CollectRequest {
  query: Query;
  /** Aborted when the copilot's timeoutMs elapses or the run is cancelled: pass it to every request, and close pages on it. */
  signal: AbortSignal;
  /**
   * The item inside a run, with the results store: adapters that keep steps as they go (agent copilots: each model turn
   * and tool call) store them here and, on a retried attempt, resume from them. Absent outside a run.
   */
  item?: { store: ResultsStore; runId: string; queryId: string; copilot: string };
}

export interface CollectedResponse {
  /** The final user-visible answer. */
  text: string;
  /** Raw payload as received (JSON body, SSE stream, CSV row ...). */
  raw?: string;
  /** Answer container's HTML (browser adapter). */
  html?: string;
  conversationId?: string;
  /** Context that was available to the copilot (tool outputs, retrieved text), when the source provides it. */
  context?: string;
  /** The sources the copilot cited or retrieved, when the source provides them. */
  sources?: AnswerSource[];
  /**
   * For answers collected elsewhere (CSV): when the answer was written, or null when the source does not say.
   * Stored as the response's finishedAt (what the judge is told); absent for live calls, which finish now.
   */
  writtenAt?: string | null;
  /** What the endpoint's rate-limit headers said (x-ratelimit-remaining-*, x-ratelimit-reset-*). */
  rateLimit?: RateLimitInfo;
  /** Token usage when the endpoint reports it (OpenAI-style `usage`). */
  usage?: { promptTokens: number | null; completionTokens: number | null; cachedTokens: number | null };
}

export interface CopilotAdapter {
  collect(request: CollectRequest): Promise<CollectedResponse>;
  /** Let go of what the adapter holds open (an agent's MCP server processes and connections). */
  close?(): Promise<void>;
}

/** Things an adapter may need from its surroundings; secrets come only from `env`, inside the activity. */
export interface AdapterContext {
  env: NodeJS.ProcessEnv;
  /**
   * Keeps a file the adapter made (a failure screenshot) where any machine can read it — the results store — and returns
   * how to refer to it (`artefact:<id>`). Absent when the adapter runs outside a run: then nothing is kept.
   */
  saveArtefact?: (artefact: { name: string; contentType: string; bytes: Uint8Array }) => Promise<string>;
  /** Derived from the run seed; adapters whose endpoints take a sampling seed send it (reproducible copilot runs). */
  seed?: number;
}

/** One module per adapter type, registered in activities/adapters/index.ts. */
export interface AdapterModule<C extends { type: string }> {
  type: C['type'];
  /** zod schema of this adapter's config block (including the common copilot fields). */
  configSchema: z.ZodType<C>;
  /** Whether the adapter sends `query.history` as previous turns. */
  supportsHistory: boolean;
  create(config: C, context: AdapterContext): CopilotAdapter;
  /**
   * Answers held already (CSV): where they come from. A run imports every copilot of one source in one step instead of
   * asking for them one by one.
   */
  importSource?(config: C): string;
  /**
   * The adapter records its own LLM calls (an agent: one per model turn, as each completes), so the collect activity
   * records none for the item.
   */
  recordsOwnCalls?: boolean;
  /** Optional up-front check run when the config is loaded (e.g. a CSV file has the copilot's column). */
  validate?(config: C): void;
}
