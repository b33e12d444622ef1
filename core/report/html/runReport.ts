/**
 * Pieces every run's report.html shares, whatever the protocol: the header (what was run, how), the cost
 * section and the drill-down data. Protocol modules add their own charts between them.
 */
import { PANEL_QUORUM_ERROR } from '../../stats/consensus';
import type { Panel } from '../../stats/panel';
import { judgeFailuresSummary } from '../panelReport';
import { DEFAULT_MAX_ANSWER_CHARS, truncatedAnswer } from '../../snapshots/text';
import type { CostSummary } from '../../stats/cost';
import { COST_CAPTION, costHeader, costNote, costRows } from '../costTable';
import type { ReportHtml, ReportInput } from '../../model/protocol';
import type { Query, StoredJudgment, StoredResponse } from '../../model/types';
import {
  dataTable,
  esc,
  factList,
  htmlPageChunks,
  htmlPageChunksAsync,
  section,
  simulatedNote,
  StreamedArray,
  toc,
} from './page';
import {
  AGENT_HEADER,
  agentRows,
  drillSteps,
  TOOL_HEADER,
  toolRows,
  type AgentFigures,
  type DrillStep,
} from '../agentReport';

import type { CalibratedWinRates } from '../../study/calibrated';

export interface HtmlReportInput extends ReportInput {
  /** The report.json object just built (with its `cost` block): charts read their numbers from it. */
  report: Record<string, unknown>;
  /** Win rates calibrated by the run's human preference studies that have annotations (shown beside the judge's own). */
  studies?: Array<{ study: string; calibrated: CalibratedWinRates }>;
}

/** Drill-down rows as the page script reads them (short keys: a paper-scale run has thousands). */
export interface DrillData {
  dimensions: Array<{ id: string; name: string }>;
  copilots: string[];
  labelName: string;
  labels: string[];
  hasRank: boolean;
  queries: Record<string, { text: string; labels: string[]; history?: Query['history'] }>;
  /** One per query × copilot; drillData makes them as the page is written (StreamedArray), never all at once. */
  rows: Iterable<DrillRow>;
}

export interface DrillRow {
  q: string;
  c: string;
  rs: string;
  js: string;
  total: number | null;
  rank: number | null;
  position: number | null;
  scores: Record<string, number> | null;
  rationales: Record<string, string> | null;
  text: string | null;
  error: string | null;
  /** The context the copilot had (grounding), cut to DRILL_CONTEXT_CHARS; absent when it had none. */
  ctx?: string;
  /** An agent copilot's steps: model turns and tool calls (arguments, a bounded result, latency, tokens). */
  st?: DrillStep[];
}

/** Characters of answer text report.html holds in all (16 MB of the page at most from the answers). */
export const DRILL_PAGE_ANSWER_CHARS = 16_000_000;
/** Fewer than this many characters of an answer are never shown, however large the run. */
export const DRILL_MIN_ANSWER_CHARS = 300;

/**
 * The characters of each answer report.html shows: maxAnswerChars (what the judge saw) while all the answers fit the
 * page's budget together; past it, the longest answers are cut to one length, the largest that keeps the total within
 * the budget (never under DRILL_MIN_ANSWER_CHARS), so short answers stay whole. A page built whole holds its text a few
 * times over while it renders, and at 10× the paper's run (72,000 answers) uncut answers would be hundreds of MB of it
 * (issue 35), more than a browser shows anyway. `lengths`: each answer's length in UTF-16 units.
 */
export function drillAnswerChars(maxAnswerChars: number, lengths: number[]): number {
  const sorted = lengths.map((n) => Math.min(n, maxAnswerChars)).sort((x, y) => x - y);
  let below = 0; // characters of the answers shorter than the cut
  for (let i = 0; i < sorted.length; i++) {
    const rest = sorted.length - i;
    // Cut every answer from i on to `cap`: the total is below + rest × cap.
    if (below + rest * sorted[i] > DRILL_PAGE_ANSWER_CHARS)
      return Math.max(DRILL_MIN_ANSWER_CHARS, Math.floor((DRILL_PAGE_ANSWER_CHARS - below) / rest));
    below += sorted[i];
  }
  return maxAnswerChars;
}

/** Context shown per answer in the drill-down; the rest stays in the results store (a run can hold megabytes of it). */
export const DRILL_CONTEXT_CHARS = 4000;
const drillContext = (context: string | null | undefined): { ctx?: string } =>
  context
    ? {
        ctx:
          context.length > DRILL_CONTEXT_CHARS
            ? `${context.slice(0, DRILL_CONTEXT_CHARS)}\n… (${context.length - DRILL_CONTEXT_CHARS} more characters in the results store)`
            : context,
      }
    : {};

/** Queries whose verdicts' rationales the drill-down reads at a time, when it reads them from the store. */
export const DRILL_RATIONALE_QUERIES = 500;

export function drillData(
  input: Pick<ReportInput, 'queries' | 'responses' | 'judgments' | 'run' | 'agentSteps' | 'drillRationales'>,
  how: { dimensions: Array<{ id: string; name: string }>; labelName: string; labelsOf: (q: Query) => string[] },
): DrillData {
  const args = {
    ...how,
    queries: input.queries,
    copilots: input.run.copilots,
    responses: input.responses,
    judgments: input.judgments,
  };
  const key = (q: string, c: string) => `${q}\u0000${c}`;
  const responseOf = new Map(args.responses.map((r) => [key(r.queryId, r.copilot), r]));
  const judgmentOf = new Map(args.judgments.map((j) => [key(j.queryId, j.copilot), j]));
  const stepsOf = new Map<string, NonNullable<ReportInput['agentSteps']>>();
  for (const s of input.agentSteps ?? [])
    stepsOf.set(key(s.queryId, s.copilot), [...(stepsOf.get(key(s.queryId, s.copilot)) ?? []), s]);
  const labels = new Set<string>();
  const queries: DrillData['queries'] = {};
  for (const q of args.queries) {
    const ls = args.labelsOf(q);
    ls.forEach((l) => labels.add(l));
    queries[q.id] = { text: q.text, labels: ls, ...(q.history?.length ? { history: q.history } : {}) };
  }
  // A page holds every answer, each cut to its share of the page's budget (responses.jsonl beside the report has them whole).
  const maxChars = drillAnswerChars(
    (input.run.config as { maxAnswerChars?: number } | null)?.maxAnswerChars ?? DEFAULT_MAX_ANSWER_CHARS,
    args.responses.map((r) => r.text?.length ?? 0),
  );
  const shown = (text: string | null | undefined) =>
    text ? (truncatedAnswer(text, maxChars, 'responses.jsonl has it whole') ?? text) : null;
  const rowOf = (q: Query, c: string, rationales: Record<string, string> | null): DrillRow => {
    const r = responseOf.get(key(q.id, c));
    const j = judgmentOf.get(key(q.id, c));
    return {
      q: q.id,
      c,
      rs: r?.status ?? 'none',
      js: j?.status ?? 'none',
      total: j?.total ?? null,
      rank: j?.rank ?? null,
      position: j?.position ?? null,
      scores: j?.scores ?? null,
      rationales,
      text: shown(r?.text),
      error:
        r && r.status !== 'ok'
          ? `${r.status}: ${r.errorKind ?? ''} ${r.errorMessage ?? ''}`.trim()
          : j?.status === 'failed'
            ? j.error
            : null,
      ...drillContext(r?.context),
      ...(stepsOf.has(key(q.id, c)) ? { st: drillSteps(stepsOf.get(key(q.id, c))!) } : {}),
    };
  };
  function* rows(): Generator<DrillRow> {
    for (const q of args.queries)
      for (const c of args.copilots) yield rowOf(q, c, judgmentOf.get(key(q.id, c))?.rationales ?? null);
  }
  // Judgments read without their rationales: each row shows those of the verdict its consensus judgment came from (the
  // judgment's own sample and judge; consensusJudgments), read a page of queries at a time.
  const readRationales = input.drillRationales;
  async function* pagedRows(): AsyncGenerator<DrillRow> {
    for (let at = 0; at < args.queries.length; at += DRILL_RATIONALE_QUERIES) {
      const page = args.queries.slice(at, at + DRILL_RATIONALE_QUERIES);
      const held = new Map<string, Record<string, string> | null>();
      for (const v of await readRationales!(page.map((q) => q.id)))
        held.set(`${key(v.queryId, v.copilot)}\u0000${v.sample}\u0000${v.judgeName}`, v.rationales);
      for (const q of page)
        for (const c of args.copilots) {
          const j = judgmentOf.get(key(q.id, c));
          const quorumFailed = j?.status === 'failed' && Boolean(j.error?.startsWith(PANEL_QUORUM_ERROR));
          yield rowOf(
            q,
            c,
            j && !quorumFailed
              ? (held.get(`${key(q.id, c)}\u0000${j.sample ?? 0}\u0000${j.judgeName ?? ''}`) ?? null)
              : null,
          );
        }
    }
  }
  return {
    dimensions: args.dimensions,
    copilots: args.copilots,
    labelName: args.labelName,
    labels: [...labels].sort(),
    hasRank: args.queries.some((q) => args.copilots.some((c) => (judgmentOf.get(key(q.id, c))?.rank ?? null) !== null)),
    queries,
    rows: new StreamedArray<DrillRow>(readRationales ? pagedRows : rows),
  };
}

/** What was run and how, at the top of every run report. */
export function runHeader(
  input: HtmlReportInput,
  title: string,
  extra: Array<[string, string | number | null | undefined]> = [],
): string {
  const { run, report } = input;
  const judge = (run.config as { judge?: Record<string, unknown> }).judge ?? {};
  const settings = [
    `temperature ${run.judge.temperature}`,
    judge.responseFormat ? `response format ${judge.responseFormat}` : null,
    judge.concurrency ? `concurrency ${judge.concurrency}` : null,
    judge.timeoutMs ? `timeout ${judge.timeoutMs} ms` : null,
    judge.maxAttempts ? `max attempts ${judge.maxAttempts}` : null,
  ]
    .filter(Boolean)
    .join(', ');
  return `<h1>${esc(title)} — run ${esc(run.runId)}</h1>${simulatedNote(Boolean(report.simulated))}${factList([
    ['run id', run.runId],
    ['snapshot id', run.snapshotId],
    ['queries', input.queries.length],
    ['rubric version', String(report.rubricVersion ?? run.rubricVersion)],
    ['judge model', run.judge.model],
    ['judge endpoint', run.judge.baseURL],
    ['judge settings', settings],
    ['seed', String((run.config as { seed?: string }).seed ?? '–')],
    ['simulated', report.simulated ? 'yes — local simulator' : 'no'],
    ['copilots', run.copilots.join(', ')],
    ...(run.sourceRunId ? ([['re-judge of', run.sourceRunId]] as Array<[string, string]>) : []),
    ...extra,
    ['started', run.startedAt],
    ['generated', String(report.generatedAt ?? '')],
  ])}`;
}

/** Calls, tokens, latency, failures and estimated cost per copilot and per judge model. */
export function costSection(cost: CostSummary | undefined): string {
  if (!cost) return '';
  const table = dataTable(COST_CAPTION, costHeader(cost), costRows(cost), 'id="cost-table"');
  return section(
    'cost',
    'What the run cost',
    table,
    costNote(cost, (text) => `<code>${esc(text)}</code>`),
  );
}

/** Agent copilots: model turns, tool calls (per tool), tool errors, time and cost per answer. */
export function agentSection(figures: AgentFigures | undefined): string {
  if (!figures) return '';
  const totals = dataTable(
    'Agent copilots: what each answer took',
    AGENT_HEADER,
    agentRows(figures),
    'id="agent-table"',
  );
  const tools = dataTable('Tool calls per tool', TOOL_HEADER, toolRows(figures), 'id="agent-tools"');
  return `<p class="intro">From the steps stored as each completed (time per answer runs from its first step to its last, across retried attempts); select an answer under Every answer to see its steps.</p>${totals}${tools}`;
}

/** A stored artefact as report.json lists it; `file` is where `judgeflow report` wrote it, relative to the report. */
export interface ReportArtefact {
  ref: string;
  name: string;
  contentType: string;
  size: number;
  file: string;
}

/** Links to the run's artefacts (failure screenshots): files next to report.html, or served by `judgeflow view`. */
function artefactSection(artefacts: ReportArtefact[] | undefined): string {
  if (!artefacts?.length) return '';
  const items = artefacts.map(
    (a) =>
      `<li><a href="${esc(a.file)}">${esc(a.name)}</a> (${esc(a.contentType)}, ${a.size} bytes) <code>${esc(a.ref)}</code></li>`,
  );
  return section(
    'artefacts',
    'Artefacts',
    `<ul>${items.join('')}</ul>`,
    'Kept in the results store; failure messages name them by <code>artefact:ID</code>.',
  );
}

/** A run report page: header, contents, protocol sections, cost, artefacts, drill-down. */
export function runReportPage(args: {
  title: string;
  header: string;
  sections: Array<[id: string, title: string, html: string]>;
  /** Sections every protocol shares about its judges (repeated samples, panels): after the protocol's own. */
  judging?: Array<[id: string, title: string, html: string]>;
  cost?: CostSummary;
  artefacts?: ReportArtefact[];
  /** report.json's `agents` block, when the run has agent copilots. */
  agents?: AgentFigures;
  drill: DrillData;
}): ReportHtml {
  const sections = [
    ...args.sections,
    ...(args.judging ?? []),
    ['agents', 'Agent copilots', agentSection(args.agents)] as [string, string, string],
  ].filter(([, , html]) => html);
  const cost = costSection(args.cost);
  const artefacts = artefactSection(args.artefacts);
  const entries: Array<[string, string]> = [
    ...sections.map(([id, title]) => [id, title] as [string, string]),
    ...(cost ? [['cost', 'Cost'] as [string, string]] : []),
    ...(artefacts ? [['artefacts', 'Artefacts'] as [string, string]] : []),
    ['drill', 'Every answer'],
  ];
  const drill = section(
    'drill',
    'Every answer',
    '<noscript>The table of every answer needs JavaScript; results.csv has the same rows.</noscript>',
    "Search by words of the query or the answer, filter by copilot, label or status; select a row to read the query, the answer and the judge's rationales, and from there every copilot's answer to that query side by side.",
  );
  const page = {
    title: args.title,
    header: args.header + toc(entries),
    body: sections.map(([id, title, html]) => section(id, title, html)).join('\n') + cost + artefacts + drill,
    data: { drill: args.drill },
  };
  // Iterable again and again (each time a new nonce): the pieces are made as they are read.
  return { [Symbol.iterator]: () => htmlPageChunks(page), [Symbol.asyncIterator]: () => htmlPageChunksAsync(page) };
}

/** Failure counts by kind per copilot: failed/missing responses by adapter error kind, failed judgments. */
export function failureKinds(
  copilots: string[],
  responses: StoredResponse[],
  judgments: StoredJudgment[],
): { kinds: string[]; counts: Record<string, Record<string, number>> } {
  const counts: Record<string, Record<string, number>> = Object.fromEntries(copilots.map((c) => [c, {}]));
  const add = (c: string, k: string) => {
    counts[c] ??= {};
    counts[c][k] = (counts[c][k] ?? 0) + 1;
  };
  for (const r of responses)
    if (r.status !== 'ok')
      add(r.copilot, r.status === 'missing' ? 'response missing' : `response ${r.errorKind ?? 'failed'}`);
  for (const j of judgments)
    if (j.status === 'failed')
      add(
        j.copilot,
        j.error?.startsWith(PANEL_QUORUM_ERROR)
          ? 'panel: too few judges'
          : /invalid judge answer/.test(j.error ?? '')
            ? 'judge invalid answer'
            : 'judge failed',
      );
  const kinds = [...new Set(Object.values(counts).flatMap((k) => Object.keys(k)))].sort();
  return { kinds, counts };
}

/** The Failures section: items with no score by kind, and (a panel) the judges that failed and what the scores rest on. */
export function failureTable(
  copilots: string[],
  responses: StoredResponse[],
  judgments: StoredJudgment[],
  report?: Record<string, unknown>,
): string {
  const { kinds, counts } = failureKinds(copilots, responses, judgments);
  const judges = judgeFailuresSummary(report?.panel as Panel | undefined);
  const judgesNote = judges ? `<p class="note" id="failures-judges">${esc(judges)}</p>` : '';
  if (!kinds.length)
    return judges
      ? `${judgesNote}<p>Every response was collected and has a panel score.</p>`
      : '<p id="failures-none">No failures: every response was collected and judged.</p>';
  return (
    judgesNote +
    dataTable(
      'Items with no score, by kind of failure',
      ['copilot', ...kinds, 'total'],
      copilots.map((c) => [
        c,
        ...kinds.map((k) => counts[c]?.[k] ?? 0),
        Object.values(counts[c] ?? {}).reduce((a, b) => a + b, 0),
      ]),
      'id="failures-table"',
    )
  );
}
