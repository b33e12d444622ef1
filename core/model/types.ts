import type { CallUsage } from '../llm/types';

/** Domain types shared by activities, protocols and adapters. Workflows import only the small run-level ones. */

export interface Turn {
  role: 'user' | 'assistant';
  content: string;
}

/**
 * One benchmark query as it lives in a snapshot: what every protocol has (id, text, earlier turns), plus the
 * protocol's own labels and fields (LATTICE task and category, CryptoAnalystBench tags and context, ...), validated by
 * that protocol's query schema and read through its module (`labelsOf`), never by shared code.
 */
export interface Query {
  id: string;
  text: string;
  /** Previous turns of the user's conversation, oldest first. */
  history?: Turn[];
  readonly [field: string]: unknown;
}

export type ResponseStatus = 'ok' | 'failed' | 'missing';

/** What is stored per copilot response. */
/**
 * One source a copilot retrieved or cited (a search result, a document, a tool output): what its citations refer to.
 * Shared by the adapters that read sources (http `sourcesPath`, OpenAI-compatible search citations, browser
 * `selectors.sources`, CSV traces) and the grounding checks that verify citations against them.
 */
export interface AnswerSource {
  id?: string;
  url?: string;
  title?: string;
  /** The source's text, when the copilot's API or trace gives it. */
  text?: string;
}

export interface StoredResponse {
  runId: string;
  queryId: string;
  copilot: string;
  status: ResponseStatus;
  text: string | null;
  raw: string | null;
  html: string | null;
  adapter: string;
  startedAt: string | null;
  finishedAt: string | null;
  latencyMs: number | null;
  errorKind: string | null;
  errorMessage: string | null;
  conversationId: string | null;
  context: string | null;
  /** The sources the copilot cited or retrieved (absent or null when its source gives none). */
  sources?: AnswerSource[] | null;
}

export type JudgmentStatus = 'ok' | 'failed';

/** One judge verdict on one response under one rubric version. */
export interface StoredJudgment {
  runId: string;
  queryId: string;
  copilot: string;
  rubricVersion: string;
  status: JudgmentStatus;
  /** dimension id -> integer score */
  scores: Record<string, number> | null;
  /** dimension id -> rationale */
  rationales: Record<string, string> | null;
  /** protocol score of this response (LATTICE 0-100; CAB sum of dimensions 4-40) */
  total: number | null;
  /** 1-based rank within the query, for protocols that rank the responses to one query (CryptoAnalystBench); else null */
  rank: number | null;
  /** 1-based position in which the judge saw the response, for protocols that show several together; else null */
  position: number | null;
  error: string | null;
  judge: JudgeStamp;
  attempts: number;
  createdAt: string;
  /** Repeated judging (`samples`): which independent sample of this unit, from 0; a unit judged once is sample 0. */
  sample?: number;
  /** Judge panels: the panel member's name; '' for a run's single judge. */
  judgeName?: string;
}

/** Recorded with every judgment so results can be audited and re-judged. */
export interface JudgeStamp {
  model: string;
  baseURL: string;
  /** null: not sent (models that accept only their default). */
  temperature: number | null;
  rubricVersion: string;
  /** The seed sent with the request (from the run seed), when one was sent. */
  seed?: number | null;
  /** The provider's system_fingerprint for the answer, when it returned one. */
  systemFingerprint?: string | null;
}

/** One request to an LLM or copilot endpoint (every attempt, failed ones included), for a run's cost figures. */
export interface LlmCallRecord extends Omit<CallUsage, 'model'> {
  runId: string;
  role: 'copilot' | 'judge';
  /** The copilot's name, or the judge model (one per panel member). */
  name: string;
  /** null for copilots without a model (http, browser). */
  model: string | null;
  queryId: string | null;
  at: string;
  /** Answered through the provider's Batch API (priced at the batch price, core/stats/cost.ts); absent for live calls. */
  batch?: boolean;
}
