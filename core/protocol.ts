import type { AnswerCache, CallUsage, ModelEndpoint } from './llm';
import type { JudgeUnit, ResultsStore, RunRecord } from './store';
import type { Query, StoredJudgment, StoredResponse } from './types';

/** A rubric after validation: `content` is exactly what the version hash covers. */
export interface LoadedRubric {
  protocol: string;
  version: string;
  dir: string;
  content: Record<string, unknown>;
  judge: { temperature: number; maxInvalidAnswers: number };
}

export interface JudgeContext {
  store: ResultsStore;
  runId: string;
  snapshotId: string;
  rubric: LoadedRubric;
  judge: ModelEndpoint;
  env: NodeJS.ProcessEnv;
  /** Present when re-judging may reuse answers to identical requests. */
  cache?: AnswerCache;
  /** Protocol-specific run options from the config (e.g. evaluationDate, errorTaxonomy). */
  options: Record<string, unknown>;
  /** Aborted when the run is cancelled: pass it to every judge call so none is made (or paid for) after that. */
  signal?: AbortSignal;
  /** Records every judge request sent (tokens, latency, failure kind) for the run's cost figures. */
  recordCall?: (usage: CallUsage) => void | Promise<void>;
}

export interface ReportInput {
  run: RunRecord;
  queries: Query[];
  responses: StoredResponse[];
  judgments: StoredJudgment[];
  rubric: LoadedRubric;
  /** What planUnits stored (e.g. the presentation design). */
  plan: unknown;
  options: Record<string, unknown>;
}

export interface ReportFiles {
  json: Record<string, unknown>;
  markdown: string;
  csv: unknown[][];
  /** One headline figure per copilot, for `judgeflow runs`. */
  summary: Record<string, number | null>;
  /** Additional files, e.g. an .xlsx workbook. */
  extra?: Array<{ name: string; write(file: string): Promise<void> }>;
}

/**
 * A protocol is rubric data plus this small module. Workflows only see unit counts and ids,
 * so adding a protocol never touches them.
 */
export interface ProtocolModule {
  id: string;
  title: string;
  defaultRubricDir: string;
  loadRubric(dir: string): LoadedRubric;
  /** Rebuild a rubric from the content stored with a run, so a resumed run judges with exactly the rubric it started with. */
  rubricFromContent(content: Record<string, unknown>, dir: string): LoadedRubric;
  /** Read and validate a query file (JSON Lines, or what else the protocol accepts). */
  parseQueries(file: string): Query[];
  /** Decide what the judge sees together: one unit per judge conversation. */
  planUnits(args: { queries: Query[]; responses: StoredResponse[]; copilots: string[]; seed: string }): { units: JudgeUnit[]; plan?: unknown };
  judgeUnit(unit: JudgeUnit, ctx: JudgeContext): Promise<{ judged: number; failed: number }>;
  buildReport(input: ReportInput): ReportFiles;
  /** Judge requests for one query with `answers` responses when every answer is valid (what `run --dry-run` plans). */
  judgeCallsPerQuery(answers: number, options: Record<string, unknown>): number;
  /** report.html: one self-contained page drawn from report.json's numbers (input.report) plus the stored answers. */
  buildHtml(input: ReportInput & { report: Record<string, unknown> }): string;
}

/** Slack on top of a judge unit's calls for store writes and scheduling. */
export const JUDGE_UNIT_SLACK_MS = 60_000;

/**
 * How long judging one unit may take at most: every judge call it makes (as the protocol counts them for a unit of
 * `answers` responses), each re-asked up to `maxInvalidAnswers` times, each bounded by the judge's call timeout.
 * A 6-copilot CryptoAnalystBench unit with the error taxonomy: (6 + 1 + 6) × 3 = 39 calls.
 */
export function judgeUnitTimeoutMs(protocol: Pick<ProtocolModule, 'judgeCallsPerQuery'>, answers: number, options: Record<string, unknown>, callTimeoutMs: number, maxInvalidAnswers: number): number {
  return protocol.judgeCallsPerQuery(answers, options) * (1 + maxInvalidAnswers) * callTimeoutMs + JUDGE_UNIT_SLACK_MS;
}
