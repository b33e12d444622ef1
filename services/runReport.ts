import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { toCsv } from '../core/io/csv';
import { costMarkdown, mdText, table } from '../core/report/markdown';
import { moveFile, replaceDirWhole, writeChunks } from '../core/io/files';
import { type ReportFiles, type ReportHtml, type ReportInput } from '../core/model/protocol';
import { artefactFileName, artefactRef } from '../core/model/store';
import { codePointLength, DEFAULT_MAX_ANSWER_CHARS } from '../core/snapshots/text';
import type { ReportArtefact } from '../core/report/html/runReport';
import { consensusJudgments } from '../core/stats/consensus';
import { withIntervalsAhead } from '../core/stats/intervalsAhead';
import { reliability } from '../core/stats/reliability';
import { panelFigures } from '../core/stats/panel';
import { judgingMarkdown } from '../core/report/judgingReport';
import { costOfTally, newCostTally, tallyCostCalls, type CostSummary, type Pricing } from '../core/stats/cost';
import { agentFigures, agentMarkdown } from '../core/report/agentReport';
import type { StoredJudgment, StoredResponse } from '../core/model/types';
import { calibratedWinRates, calibrationDesignOf, type CalibratedWinRates } from '../core/study/calibrated';
import { judgeScoresOf, toFacts } from '../core/study/analysis';
import { failureReasons } from '../core/stats/failureReasons';
import { protocolFor } from '../rubrics';
import {
  protocolOptions,
  requireRubric,
  requireRun,
  runDir,
  panelAggregate,
  panelMinJudges,
  runSamples,
  type ActivityDeps,
} from '../activities/deps';
import type { ControlStep } from '../contract/run';
import { describeLimitChange } from '../contract/configChange';
import { writeArtefacts } from '../activities/artefacts';
import { groundingFigures } from '../activities/grounding';

/**
 * A run's report, built from the results store: the use case the writeReport activity (activities/run.ts), the CLI
 * (`judgeflow report`, `import-lattice-scores`) and the view server share. The protocol's report
 * (rubrics/<id>/report.ts) with what every report adds: judging figures, cost, answers truncated for the judge, the
 * run's artefacts and control history, calibrations from human studies.
 */

/** Answers longer than maxAnswerChars: the judge saw only their beginning (report.json `truncatedForJudge`). */
function truncatedForJudge(
  responses: StoredResponse[],
  maxAnswerChars: number,
): Array<{ queryId: string; copilot: string; chars: number }> {
  return responses.flatMap((r) => {
    const chars = r.text && r.text.length > maxAnswerChars ? codePointLength(r.text) : 0;
    return chars > maxAnswerChars ? [{ queryId: r.queryId, copilot: r.copilot, chars }] : [];
  });
}

function truncatedMarkdown(
  truncated: Array<{ queryId: string; copilot: string; chars: number }>,
  maxAnswerChars: number,
): string[] {
  if (!truncated.length) return [];
  return [
    '',
    '## Answers truncated for the judge',
    '',
    `${truncated.length} answer(s) were longer than maxAnswerChars (${maxAnswerChars.toLocaleString('en')} characters): each is stored and in responses.jsonl whole, but the judge was sent only its first ${maxAnswerChars.toLocaleString('en')} characters, with a note saying so.`,
    '',
    table(
      ['query', 'copilot', 'characters'],
      truncated.map((t) => [t.queryId, t.copilot, t.chars]),
    ),
  ];
}

/** report.md's account of the run's pauses, resumes, tunes, config replacements and budget warnings. */
function controlMarkdown(control: Record<string, unknown> | null): string[] {
  const record = control as {
    history?: ControlStep[];
    warnings?: string[];
    budget?: { usd?: number; tokens?: number };
  } | null;
  if (!record || (!record.history?.length && !record.warnings?.length)) return [];
  const budget = record.budget
    ? [
        `Budget: ${[record.budget.usd !== undefined ? `$${record.budget.usd}` : '', record.budget.tokens !== undefined ? `${record.budget.tokens} tokens` : ''].filter(Boolean).join(', ')}.`,
        '',
      ]
    : [];
  // A tune says each limit's old and new value, and why.
  const step = (h: ControlStep) =>
    h.limits?.length ? `${h.limits.map(describeLimitChange).join('; ')} (${h.reason})` : h.reason;
  return [
    '',
    '## Pauses and budget',
    '',
    ...budget,
    ...(record.warnings ?? []).map((w) => `- ${mdText(w)}`),
    ...(record.history ?? []).map((h) => `- ${h.at}: ${h.action} (${h.by}): ${mdText(step(h))}`),
  ];
}

/** report.md's list of the run's artefacts (failure screenshots), linked to their copies beside the report. */
function artefactsMarkdown(artefacts: ReportArtefact[] | undefined): string[] {
  if (!artefacts?.length) return [];
  // Links point at artefacts/<file> beside the report; the ids and names are the store's, the names escaped as text.
  return [
    '',
    '## Artefacts',
    '',
    table(
      ['artefact', 'name', 'type', 'bytes'],
      artefacts.map((a) => [`[${a.ref}](${a.file})`, a.name, a.contentType, a.size]),
    ),
  ];
}

const RESPONSE_FIELDS = [
  'queryId',
  'copilot',
  'status',
  'text',
  'adapter',
  'startedAt',
  'finishedAt',
  'latencyMs',
  'errorKind',
  'errorMessage',
  'conversationId',
] as const;

/** What each copilot answered, as stored (raw payloads and HTML stay in the store): one line at a time, never one string of every answer. */
function* responseLines(responses: StoredResponse[]): Generator<string> {
  for (const response of responses)
    yield JSON.stringify(Object.fromEntries(RESPONSE_FIELDS.map((f) => [f, response[f]]))) + '\n';
}

/** Whether two reads of a run's answers give the same responses.jsonl (its fields, in order: strings compared by value). */
export function sameResponseLines(a: StoredResponse[], b: StoredResponse[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) for (const f of RESPONSE_FIELDS) if (!Object.is(a[i][f], b[i][f])) return false;
  return true;
}

/** Rows the report reads from the store at a time, where it reads in pages (issue 35). */
export const REPORT_PAGE_ROWS = 10_000;

/** report.json's cost block from the run's LLM calls read a page at a time (never every call at once). */
export async function reportCost(
  store: ActivityDeps['store'],
  runId: string,
  copilots: string[],
  pricing: Pricing | undefined,
  pageRows = REPORT_PAGE_ROWS,
): Promise<CostSummary> {
  const tally = newCostTally();
  for (let cursor = 0; ;) {
    const page = await store.llmCallsAfter(runId, cursor, pageRows);
    tallyCostCalls(tally, page.calls);
    if (page.calls.length < pageRows) break;
    cursor = page.cursor;
  }
  return costOfTally(tally, copilots, pricing);
}

/** A run's report files and report.html, built from the store (nothing written): `judgeflow view` shows them as they are. */
export async function buildRunReport(
  deps: ActivityDeps,
  runId: string,
): Promise<{
  run: Awaited<ReturnType<typeof requireRun>>;
  files: ReportFiles;
  /** report.html in pieces (renderReport writes them one at a time; the page of a large run is tens of MB). */
  html: ReportHtml;
  responses: StoredResponse[];
}> {
  const { store } = deps;
  const run = await requireRun(deps, runId);
  const protocol = protocolFor(run.protocol);
  // Every sample of every judge; reports read one consensus verdict per response and measure the spread separately.
  // Without their rationales where only the drill-down shows them (a panel's figures quote its members' rationales):
  // the drill-down reads them a page of queries at a time, so a large run's rationales are never all held (issue 35).
  const pagedRationales = protocol.reportRationales === 'drill' && (run.config.judges ?? []).length <= 1;
  const verdicts = await store.judgments(runId, run.rubricVersion, { rationales: !pagedRationales });
  const queries = await store.snapshotQueries(run.snapshotId);
  const judgments = consensusJudgments(verdicts, panelAggregate(run.config), panelMinJudges(run.config));
  const rubric = await requireRubric(deps, run);
  // The intervals buildReport will ask for are computed on another thread from here, while the rest is read.
  const ahead =
    deps.intervalsAhead && protocol.reportIntervals
      ? deps.intervalsAhead(protocol.reportIntervals({ run, queries, judgments, rubric, seed: run.config.seed }))
      : undefined;
  let input: ReportInput;
  try {
    input = {
      run,
      queries,
      // Without the raw payloads and pages: nothing of a report reads them, and they can be most of a response's bytes.
      responses: await store.responses(runId, { payloads: false }),
      judgments,
      verdicts,
      rubric,
      plan: await store.runPlan(runId),
      // The protocol's own; grounding is reported apart. Only for a report that reads them (one per answer at 10×: 72,000).
      ...(protocol.reportUnits ? { units: (await store.judgeUnits(runId)).filter((u) => u.kind !== 'grounding') } : {}),
      options: protocolOptions(protocol, run.config),
      seed: run.config.seed,
      simulated: Boolean(run.config.simulated),
      agentSteps: await store.runAgentSteps(runId),
      ...(pagedRationales
        ? { drillRationales: (queryIds: string[]) => store.judgmentRationales(runId, run.rubricVersion, queryIds) }
        : {}),
    };
  } catch (error) {
    ahead?.cancel();
    throw error;
  }
  const files = ahead
    ? withIntervalsAhead(ahead.finish(), () => protocol.buildReport(input))
    : protocol.buildReport(input);
  const cost = await reportCost(store, runId, run.copilots, run.config.pricing);
  files.json.cost = cost;
  const agents = agentFigures(input.agentSteps ?? [], cost);
  if (agents) files.json.agents = agents;
  // Batch judging: every batch the run sent, with its provider id, final state and counts.
  const batches = await store.judgeBatches(runId);
  if (batches.length)
    files.json.batches = batches.map(({ key, batchId, api, state, counts, lines }) => ({
      key,
      batchId,
      api,
      state,
      counts,
      lines,
    }));
  // Pauses, resumes and budget warnings the run's workflow recorded (workflows/runControl.ts).
  const control = await store.getWork<Record<string, unknown>>(`control:${runId}`, 'record');
  if (control) files.json.control = control;
  const reliable = reliability(verdicts, runSamples(run.config), protocol.scoreKey);
  if (reliable) files.json.reliability = reliable;
  const panel = panelFigures({
    rows: verdicts,
    judges: (run.config.judges ?? []).map(({ name, model, family }) => ({
      name,
      model,
      ...(family ? { family } : {}),
    })),
    copilotFamilies: Object.fromEntries(
      run.copilots.map((c) => [c, run.config.copilots.find((x) => x.name === c)?.family]),
    ),
    aggregate: panelAggregate(run.config),
    minJudges: panelMinJudges(run.config),
    scoreKey: protocol.scoreKey,
  });
  if (panel) files.json.panel = panel;
  const grounding = await groundingFigures(deps, run, input);
  if (grounding) files.json.grounding = grounding;
  const artefacts = await store.artefacts(runId);
  if (artefacts.length)
    files.json.artefacts = artefacts.map((a): ReportArtefact => ({
      ref: artefactRef(a.artefactId),
      name: a.name,
      contentType: a.contentType,
      size: a.size,
      file: `artefacts/${artefactFileName(a)}`,
    }));
  const reasons = failureReasons(input.responses, input.judgments);
  if (reasons.length) files.json.failureReasons = reasons;
  const truncated = truncatedForJudge(input.responses, run.config.maxAnswerChars ?? DEFAULT_MAX_ANSWER_CHARS);
  if (truncated.length) files.json.truncatedForJudge = truncated;
  files.markdown = [
    files.markdown,
    ...judgingMarkdown(files.json),
    ...costMarkdown(cost),
    ...agentMarkdown(agents),
    ...truncatedMarkdown(truncated, run.config.maxAnswerChars ?? DEFAULT_MAX_ANSWER_CHARS),
    ...artefactsMarkdown(files.json.artefacts as ReportArtefact[] | undefined),
    ...controlMarkdown(control),
  ].join('\n');
  const studies = await studyCalibrations(
    store,
    run.runId,
    run.copilots,
    input.queries.map((q) => q.id),
    input.judgments,
  );
  return {
    run,
    files,
    html: protocol.buildHtml({ ...input, report: files.json, ...(studies.length ? { studies } : {}) }),
    responses: input.responses,
  };
}

/** Calibrated win rates from every study of the run that has annotations (report.html shows them beside the judge's). */
async function studyCalibrations(
  store: ActivityDeps['store'],
  runId: string,
  runCopilots: string[],
  queryIds: string[],
  verdicts: StoredJudgment[],
) {
  const out: Array<{ study: string; calibrated: CalibratedWinRates }> = [];
  const judge = judgeScoresOf(runId, verdicts);
  for (const study of (await store.studies.listStudies()).filter((s) => s.runId === runId)) {
    const annotations = await store.studies.annotations(study.name);
    if (!annotations.length) continue;
    const copilots = study.spec.copilots.filter((c) => runCopilots.includes(c));
    out.push({
      study: study.name,
      calibrated: calibratedWinRates({
        copilots,
        queryIds: queryIds.filter((q) => copilots.some((c) => judge.scores.has(`${q}|${c}`))),
        studyItems: await store.studies.studyItems(study.name),
        annotations: toFacts(annotations),
        judge,
        tieMargin: 0,
        design: calibrationDesignOf(study.spec),
      }),
    });
  }
  return out;
}

/**
 * Render a run's report (and its artefacts, under artefacts/) from the store into its output directory, or `outDir`
 * (`judgeflow report RUN_ID [--out DIR]`). Every file is written into a new directory beside it, which then replaces the
 * old one whole (replaceDirWhole): a report step killed half-way leaves the previous report, never part of a new one.
 * The report activity heartbeats around it (the CLI's `judgeflow report` runs it outside any activity).
 */
export async function renderReport(
  deps: ActivityDeps,
  runId: string,
  outDir?: string,
  opts: {
    /**
     * responses.jsonl written elsewhere meanwhile (writeResponsesBeside, by the worker's own thread while its report
     * thread renders the rest): the file, on the report's filesystem, moved into the report instead of written here.
     */
    responsesJsonl?: Promise<string>;
    /**
     * responses.jsonl written earlier (a rehearsal's, worker/reportThread.ts) from `responses`: moved into the report
     * when the run's answers read now are the same (sameResponseLines), else the file is written here as usual.
     */
    reuseResponses?: { file: string; responses: StoredResponse[] };
    /** Told the answers the report read (a rehearsal keeps them with its responses.jsonl, for reuseResponses). */
    readResponses?: (responses: StoredResponse[]) => void;
  } = {},
): Promise<{ reportPath: string; summary: Record<string, number | null> }> {
  // Heard at once: a failed write that the render never reaches (its own error first) is not an unhandled rejection.
  opts.responsesJsonl?.catch(() => undefined);
  const { run, files, html, responses } = await buildRunReport(deps, runId);
  opts.readResponses?.(responses);
  const reused =
    opts.reuseResponses &&
    fs.existsSync(opts.reuseResponses.file) &&
    sameResponseLines(opts.reuseResponses.responses, responses)
      ? opts.reuseResponses.file
      : undefined;
  const dir = outDir ?? runDir(run);
  await replaceDirWhole(dir, async (tmp) => {
    const write = (name: string, text: string) => fs.promises.writeFile(path.join(tmp, name), text);
    await write('report.json', JSON.stringify(files.json, null, 2) + '\n');
    await write('results.csv', toCsv(files.csv));
    await write('report.md', files.markdown);
    if (reused) moveFile(reused, path.join(tmp, 'responses.jsonl'));
    else if (opts.responsesJsonl) fs.renameSync(await opts.responsesJsonl, path.join(tmp, 'responses.jsonl'));
    else await writeChunks(path.join(tmp, 'responses.jsonl'), responseLines(responses));
    await writeChunks(path.join(tmp, 'report.html'), html);
    for (const extra of files.extra ?? []) await extra.write(path.join(tmp, extra.name));
    // Copies of what the store holds, so the report's folder is complete wherever it was rendered.
    await writeArtefacts(deps.store, runId, path.join(tmp, 'artefacts'));
  });
  return { reportPath: path.join(dir, 'report.json'), summary: files.summary };
}

/**
 * The run's responses.jsonl written beside its report folder (the same filesystem, so renderReport can move it in), as
 * renderReport would write it; returns the file. The writeReport activity writes it on the worker's thread while the
 * report thread renders the rest, on the core the report thread leaves idle: the file is about 80 ms of a 0.5 s report
 * of 1,200 × 4 answers, and the report ends about 35 ms sooner (issue 29, docs/bench.md).
 */
export async function writeResponsesBeside(deps: ActivityDeps, runId: string): Promise<string> {
  const run = await requireRun(deps, runId);
  const dir = runDir(run);
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const file = path.join(path.dirname(dir), `.${path.basename(dir)}.responses-${process.pid}-${randomUUID()}.jsonl`);
  try {
    await writeChunks(file, responseLines(await deps.store.responses(runId, { payloads: false })));
  } catch (error) {
    fs.rmSync(file, { force: true });
    throw error;
  }
  return file;
}
