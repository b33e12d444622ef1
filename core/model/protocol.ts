import type { StoredAgentStep } from './agentSteps';
import type { z } from 'zod';
import { contentHash } from './hashing';
import type { AnswerCache, CallUsage, ChatMessage, JsonAnswerSpec, ModelEndpoint } from '../llm/client';
import type { PromptPair } from './prompts';
import type { JudgeSlot, JudgeUnit, ResultsStore, RunRecord, VerdictRationales } from './store';
import type { Query, StoredJudgment, StoredResponse } from './types';
import type { IntervalRequest } from '../stats/intervalsAhead';

/** A rubric after validation: `content` is exactly what the version hash covers. */
export interface LoadedRubric {
  protocol: string;
  /** Hash of the whole rubric: every verdict is stored under it. */
  version: string;
  /**
   * Hash of what reaches the judge (prompts, dimensions, scales, tasks and categories as the prompt shows them, judge
   * settings). Two versions with the same judgeVersion ask identical judge requests, so a change elsewhere (weights,
   * the rubric's name) re-scores stored verdicts with no judge call (see judgeVersionOf).
   */
  judgeVersion: string;
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
  /**
   * Which sample and which panel judge this call is: every read and write of verdicts and judge turns is keyed by it
   * (ResultsStore's `slot` arguments), and every stored judgment carries it (`judgmentSlot`).
   */
  slot: JudgeSlot;
  env: NodeJS.ProcessEnv;
  /** Present when re-judging may reuse answers to identical requests. */
  cache?: AnswerCache;
  /** This protocol's run options: its section of the config, validated by its `optionsSchema`. */
  options: Record<string, unknown>;
  /** Aborted when the run is cancelled: pass it to every judge call so none is made (or paid for) after that. */
  signal?: AbortSignal;
  /** Records every judge request sent (tokens, latency, failure kind) for the run's cost figures. */
  recordCall?: (usage: CallUsage) => void | Promise<void>;
  /** Awaited before each judge request is sent: the work item's send time (pass it to every judge call as `beforeSend`). */
  beforeSend?: () => Promise<void>;
}

export interface ReportInput {
  run: RunRecord;
  queries: Query[];
  responses: StoredResponse[];
  /** One consensus verdict per query × copilot (core/stats/consensus.ts): the mean over samples, the panel's aggregate. */
  judgments: StoredJudgment[];
  /**
   * Every stored verdict (each sample of each judge; the same rows as `judgments` when a run was judged once by one
   * judge), for figures that are about single judge conversations, e.g. position effects.
   */
  verdicts?: StoredJudgment[];
  rubric: LoadedRubric;
  /** What planAhead stored (e.g. the presentation design). */
  plan: unknown;
  /** The judge units as stored, in order; read only for a protocol whose report reads them (ProtocolModule.reportUnits). */
  units?: JudgeUnit[];
  /** This protocol's run options (its config section). */
  options: Record<string, unknown>;
  /** The run's seed (every seeded choice, e.g. bootstrap intervals). */
  seed: string;
  /** Copilots and judge were the local simulator: reports say so at the top. */
  simulated: boolean;
  /** Agent copilots' stored steps (model turns and tool calls), for the drill-down; absent or empty without agents. */
  agentSteps?: StoredAgentStep[];
  /**
   * Set when `judgments` and `verdicts` were read without their rationales (ProtocolModule.reportRationales): the
   * rationales of every verdict of these queries, which the drill-down reads a page of queries at a time (issue 35).
   */
  drillRationales?: (queryIds: string[]) => Promise<VerdictRationales[]>;
}

/**
 * report.html in pieces, made as they are read (written to its file one at a time). Read it with `for await`: the page
 * of a report that reads its drill-down rows from the store a page at a time (ReportInput.drillRationales) has no
 * synchronous reading.
 */
export type ReportHtml = Iterable<string> & AsyncIterable<string>;

export interface ReportFiles {
  json: Record<string, unknown>;
  markdown: string;
  csv: unknown[][];
  /** One headline figure per copilot, for `judgeflow runs`. */
  summary: Record<string, number | null>;
  /** Additional files, e.g. an .xlsx workbook. */
  extra?: Array<{ name: string; write(file: string): Promise<void> }>;
}

/** How a stored score key reads: a rubric dimension (averaged, compared, tested) or a 0/1 flag reported as a rate. */
export type ScoreKeyKind = { kind: 'dimension' } | { kind: 'flag'; name: string };

/**
 * Optional: the protocol generates query snapshots with an LLM, one request per cell (a crashed cell is retried alone).
 * Cells are the protocol's own strata (LATTICE: task × category).
 */
export interface QueryGeneration {
  /** Recorded as the snapshot's `generator`. */
  generator: string;
  /** The cells to fill; `subsets` restrict them (label name → allowed values), unknown values are an InputError. */
  cells(subsets: Record<string, string[] | undefined>): string[];
  loadPrompts(): PromptPair;
  messages(args: { prompts: PromptPair; cell: string; count: number; seed: string; avoid: string[] }): ChatMessage[];
  /** The answer holds at least `min` non-empty query texts. */
  spec(min: number): JsonAnswerSpec<{ queries: string[] }>;
  /** The cell a query of this protocol belongs to (for `--extend`, which keeps a parent snapshot's queries in their cells). */
  cellOf(query: Query): string | null;
  /** The k-th accepted text of a cell as a query of this protocol. */
  query(cell: string, k: number, text: string): Query;
}

/** Optional: the protocol curates query snapshots from production traffic, tagging each query with one category. */
export interface QueryCuration {
  /** Recorded as the snapshot's `generator`. */
  generator: string;
  defaultCategories: readonly string[];
  loadPrompts(): PromptPair;
  /** Batch-local ids the tagger echoes back, one per query of a batch. */
  batchId(k: number): string;
  messages(prompts: PromptPair, categories: string[], texts: string[]): ChatMessage[];
  spec(categories: string[], count: number): JsonAnswerSpec<{ labels: Record<string, string> }>;
  /** A curated traffic query as a query of this protocol. */
  query(args: { id: string; text: string; category: string }): Query;
}

/**
 * A protocol is rubric data plus this small module: everything protocol-specific that shared code needs (config options,
 * query fields and labels, which scores are dimensions, how long judging a unit may take, snapshot hooks) is asked of
 * it here, so adding a protocol is a folder in rubrics/ and one line in rubrics/index.ts. Workflows only see unit counts,
 * ids and timeouts.
 */
/** What a protocol decides a query's readiness by: which copilots answered it, and whether each answer is ok. */
export type ReadyResponse = Pick<StoredResponse, 'queryId' | 'copilot' | 'status'>;

export interface ProtocolModule {
  id: string;
  title: string;
  defaultRubricDir: string;
  /**
   * Run options under the config's `<id>:` section (e.g. `cab: { evaluationDate, errorTaxonomy }`), a zod object with
   * defaults; validated when the config is loaded and stored with the run.
   */
  optionsSchema: z.ZodObject;
  /** Re-judging keeps what made the source's verdicts comparable (CryptoAnalystBench pins the source's evaluation date). */
  rejudgeOptions?(options: Record<string, unknown>, source: Pick<RunRecord, 'startedAt'>): Record<string, unknown>;
  loadRubric(dir: string): LoadedRubric;
  /** Rebuild a rubric from the content stored with a run, so a resumed run judges with exactly the rubric it started with. */
  rubricFromContent(content: Record<string, unknown>, dir: string): LoadedRubric;
  /** One query line of this protocol (id, text, history? and its own fields), strict. */
  querySchema: z.ZodType;
  /** This protocol's query fields besides id, text and history, in the order an exported query file lists them. */
  queryFields: readonly string[];
  /**
   * Read and validate a query file (JSON Lines, or what else the protocol accepts). With the run's rubric and `warn`
   * (when a config is loaded), notes that do not stop the run, e.g. a label named differently from the rubric.
   */
  parseQueries(file: string, context?: { rubric?: LoadedRubric; warn?: (message: string) => void }): Query[];
  /**
   * A query's labels: label name → its values (a query may carry several, e.g. CryptoAnalystBench tags). Every place
   * that groups by label (reports, compare, snapshot counts and diffs) reads labels through this one function.
   */
  labelsOf(query: Query): Record<string, string[]>;
  /** Which stored score keys are rubric dimensions and which are flags (e.g. CryptoAnalystBench's `taxonomy.*`). */
  scoreKey(key: string): ScoreKeyKind;
  /**
   * Optional: a response's headline score from its stored verdict, for compare, gate and trend; default its stored `total`.
   * CryptoAnalystBench: the mean of the four dimension scores (1–10), derived so older stored runs read the same way.
   */
  responseScore?(judgment: StoredJudgment): number | null;
  /**
   * Decide what the judge sees together (one unit per judge conversation): the units that one query's stored answers make ready. Asked again each time
   * more of that query's answers are in (`responses`: every copilot's stored answer to it so far, any status); a unit
   * returned again is planned only once. LATTICE: one unit per answer, at once; CryptoAnalystBench: the query's unit
   * once every copilot has answered or failed for good. `plan` is what `planAhead` made.
   */
  readyUnits(args: {
    query: Query;
    position: number;
    responses: ReadyResponse[];
    copilots: string[];
    plan: unknown;
  }): JudgeUnit[];
  /**
   * Optional: the plan a run makes before any answer is in (stored as the run's plan, e.g. a presentation design);
   * `options` are the run's options of this protocol. Undefined: no plan.
   */
  planAhead?(args: { queries: Query[]; copilots: string[]; seed: string; options?: Record<string, unknown> }): unknown;
  judgeUnit(unit: JudgeUnit, ctx: JudgeContext): Promise<{ judged: number; failed: number }>;
  buildReport(input: ReportInput): ReportFiles;
  /**
   * 'drill': buildReport and buildHtml read verdicts' rationales only in report.html's drill-down rows, so a run judged by
   * one judge reads its judgments without them and the drill-down reads them a page of queries at a time (issue 35).
   * Absent: every judgment is read with its rationales.
   */
  reportRationales?: 'drill';
  /** buildReport reads the run's judge units (ReportInput.units); without it they are not read (a unit per answer). */
  reportUnits?: boolean;
  /**
   * Optional: the meanCI intervals buildReport will ask for, from the part of its input read first (intervalRequestsOf
   * records them): the report thread computes them on two threads while it reads the rest (core/stats/intervalsAhead.ts).
   * A request buildReport does not make costs time; one it makes that is missing is computed inside it, as without this.
   */
  reportIntervals?(input: Pick<ReportInput, 'run' | 'queries' | 'judgments' | 'rubric' | 'seed'>): IntervalRequest[];
  /** Judge requests for one query with `answers` responses when every answer is valid (what `run --dry-run` plans). */
  judgeCallsPerQuery(answers: number, options: Record<string, unknown>): number;
  /** report.html: one self-contained page drawn from report.json's numbers (input.report) plus the stored answers, in pieces (written to its file one at a time: htmlPageChunks). */
  buildHtml(input: ReportInput & { report: Record<string, unknown> }): ReportHtml;
  /**
   * Optional: rubrics built at run time from a reference harness's own files, by name (a run config's
   * `rubric: { from: <name>, file?: PATH }`), so a user can judge with the reference's texts verbatim without the
   * project shipping them. `build` reads the file and says clearly what is wrong with it when it is not the one expected.
   */
  referenceRubrics?: Record<string, ReferenceRubricBuilder>;
  /** Optional snapshot makers (`judgeflow snapshot generate|curate --protocol <id>`). */
  snapshots?: { generate?: QueryGeneration; curate?: QueryCuration };
}

/** How a protocol turns a fetched reference file into a rubric version (see ProtocolModule.referenceRubrics). */
export interface ReferenceRubricBuilder {
  /** What the rubric reproduces, for error messages and docs. */
  describe: string;
  /** Where `judgeflow dataset fetch` puts the file, relative to the working directory: the default `file`. */
  defaultFile: string;
  build(file: string): LoadedRubric;
}

/**
 * A rubric's judgeVersion: the hash of its content without the keys that only aggregate (`aggregateOnly`: paths into
 * the content, e.g. ['data', 'weights']). A protocol lists a key there only when no prompt or judge setting reads it.
 */
export function judgeVersionOf(content: Record<string, unknown>, aggregateOnly: string[][]): string {
  const copy = JSON.parse(JSON.stringify(content)) as Record<string, unknown>;
  for (const keyPath of aggregateOnly) {
    let node: Record<string, unknown> | undefined = copy;
    for (const key of keyPath.slice(0, -1)) node = node?.[key] as Record<string, unknown> | undefined;
    if (node) delete node[keyPath[keyPath.length - 1]];
  }
  return contentHash(copy);
}

/** Slack on top of a judge unit's calls for store writes and scheduling. */
export const JUDGE_UNIT_SLACK_MS = 60_000;

/**
 * How long judging one unit may take at most: every judge call it makes (as the protocol counts them for a unit of
 * `answers` responses), each re-asked up to `maxInvalidAnswers` times, each bounded by the judge's call timeout.
 * A 6-copilot CryptoAnalystBench unit with the error taxonomy: (6 + 1 + 6) × 3 = 39 calls.
 */
export function judgeUnitTimeoutMs(
  protocol: Pick<ProtocolModule, 'judgeCallsPerQuery'>,
  answers: number,
  options: Record<string, unknown>,
  callTimeoutMs: number,
  maxInvalidAnswers: number,
): number {
  return protocol.judgeCallsPerQuery(answers, options) * (1 + maxInvalidAnswers) * callTimeoutMs + JUDGE_UNIT_SLACK_MS;
}

/** The slot fields a protocol spreads into every judgment it stores. */
export const judgmentSlot = (slot: JudgeSlot): { sample: number; judgeName: string } => ({
  sample: slot.sample,
  judgeName: slot.judge,
});

/** Score keys that are not dimensions are flags; a protocol without flags says so with this. */
export const allDimensions = (): ScoreKeyKind => ({ kind: 'dimension' });
