import fs from 'node:fs';
import path from 'node:path';
import { parseCsv } from '../../core/io/csv';
import { createHash } from 'node:crypto';
import { InputError } from '../../core/model/inputError';
import { normalizeText } from '../../core/snapshots/text';
import type { Query, StoredJudgment } from '../../core/model/types';
import type { ResultsStore } from '../../core/model/store';
import { saveSnapshot, snapshotIdOf } from '../../core/snapshots/snapshots';
import { RANKING_RATIONALE } from './judge';
import { cabLabels } from './queries';
import { CAB_DIMENSIONS } from './rubric';

/**
 * `judgeflow import cab-results FILE`: a run of the CryptoAnalystBench reference harness (script.py) read from its
 * output — the workbook's "Evaluation Results" sheet, or the results CSV it writes on the way (one row per query ×
 * model: query, model, rank, the four scores, their reasonings in the workbook, ranking_reasoning, tags) — into a
 * stored run, so it sits in `trend`, `compare` and `gate` beside judgeflow's runs.
 *
 * The reference fills failures in (a score of 1 everywhere, with a fixed reasoning); where the workbook's reasonings
 * show a row was such a fill-in, it is stored as a failed judgment, as judgeflow records failures. The CSV has no
 * reasonings, so its fill-ins cannot be told apart and stay scores of 1 (the import says so).
 */

/** The reasonings script.py writes in place of a verdict: an empty response, or a scoring that failed every retry. */
const FILL_IN = [/^Empty response$/, /^Error in evaluation after retries$/];

export interface ImportedCabRun {
  runId: string;
  snapshotId: string;
  copilots: string[];
  queries: number;
  judgments: number;
  /** Rows the workbook marks as the reference's fill-ins, stored as failed. */
  failed: number;
  /** True for a CSV: fill-ins cannot be recognised, so they are stored as the scores of 1 the reference gave. */
  fillInsUnknown: boolean;
}

type Row = Record<string, string>;

async function readRows(file: string): Promise<{ rows: Row[]; where: string; hasReasoning: boolean }> {
  if (!fs.existsSync(file))
    throw new InputError(
      `${file}: no such file; pass the evaluation_statistics_*.xlsx or final_evaluation_results_*.csv the reference harness wrote`,
    );
  const ext = path.extname(file).toLowerCase();
  if (ext === '.csv') {
    const [header, ...data] = parseCsv(fs.readFileSync(file, 'utf8'), file);
    if (!header) throw new InputError(`${file}: empty CSV`);
    const rows = data.map((r) => Object.fromEntries(header.map((h, i) => [h.trim(), r[i] ?? ''])));
    return { rows, where: file, hasReasoning: header.some((h) => h.trim() === 'temporal_relevance_reasoning') };
  }
  if (ext !== '.xlsx')
    throw new InputError(
      `${file}: expected the reference harness's .xlsx workbook or its results .csv, not "${ext || 'no extension'}"`,
    );
  const wb = new (require('exceljs') as typeof import('exceljs')).Workbook();
  try {
    await wb.xlsx.readFile(file);
  } catch (error) {
    throw new InputError(`${file}: not a readable .xlsx workbook (${(error as Error).message})`);
  }
  const sheet = wb.getWorksheet('Evaluation Results');
  if (!sheet)
    throw new InputError(
      `${file}: no "Evaluation Results" sheet (sheets: ${wb.worksheets.map((w) => w.name).join(', ')}); is this the workbook script.py writes?`,
    );
  const header: string[] = [];
  sheet.getRow(1).eachCell({ includeEmpty: true }, (cell, col) => (header[col - 1] = String(cell.text ?? '').trim()));
  const rows: Row[] = [];
  for (let r = 2; r <= sheet.rowCount; r++) {
    const row = sheet.getRow(r);
    if (!row.hasValues) continue;
    rows.push(Object.fromEntries(header.map((h, i) => [h, String(row.getCell(i + 1).text ?? '')])));
  }
  return {
    rows,
    where: `${file} (sheet Evaluation Results)`,
    hasReasoning: header.includes('temporal_relevance_reasoning'),
  };
}

export async function importCabResults(
  store: ResultsStore,
  file: string,
  opts: { runId?: string; snapshotId?: string; startedAt?: string; judgeModel?: string } = {},
): Promise<ImportedCabRun> {
  const { rows, where, hasReasoning } = await readRows(file);
  const required = ['query', 'model', 'rank', ...CAB_DIMENSIONS];
  const missing = required.filter((c) => !(rows[0] && c in rows[0]));
  if (!rows.length) throw new InputError(`${where}: no result rows`);
  if (missing.length)
    throw new InputError(
      `${where}: missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}; the reference's results have query, model, rank, ${CAB_DIMENSIONS.join(', ')}`,
    );

  const problems: string[] = [];
  const texts: string[] = [];
  const tagsOfText = new Map<string, string>();
  for (const r of rows) {
    const text = r.query.trim();
    if (!tagsOfText.has(text)) {
      texts.push(text);
      tagsOfText.set(text, (r.tags ?? '').trim());
    }
  }
  // Queries: the snapshot named (matched by text, so a judgeflow run of it pairs), else one made from the file.
  let queries: Query[];
  let snapshotId: string;
  if (opts.snapshotId) {
    const snap = await store.getSnapshot(opts.snapshotId);
    if (!snap)
      throw new InputError(
        `--snapshot ${opts.snapshotId}: no such snapshot in the results store ${store.location} (see judgeflow snapshot list)`,
      );
    queries = await store.snapshotQueries(opts.snapshotId);
    snapshotId = opts.snapshotId;
    const known = new Set(queries.map((q) => normalizeText(q.text)));
    const absent = texts.filter((t) => !known.has(normalizeText(t)));
    if (absent.length)
      throw new InputError(
        `${where}: ${absent.length} of its ${texts.length} queries are not in snapshot ${snapshotId}, e.g. "${absent[0].slice(0, 80)}"; import without --snapshot to make a snapshot of the file's own queries`,
      );
  } else {
    const width = Math.max(3, String(texts.length).length);
    queries = texts.map((text, i) => ({
      id: `q${String(i + 1).padStart(width, '0')}`,
      text,
      ...(tagsOfText.get(text) ? { tags: tagsOfText.get(text) } : {}),
    }));
    snapshotId = snapshotIdOf(queries);
  }
  const idOf = new Map(queries.map((q) => [normalizeText(q.text), q.id]));

  const digest = createHash('sha256').update(fs.readFileSync(file)).digest('hex').slice(0, 12);
  const runId = opts.runId ?? `cab-reference-${digest}`;
  if (await store.getRun(runId))
    throw new InputError(
      `run ${runId} is already in the results store ${store.location}${opts.runId ? '' : ' (this file was imported before)'}; pass --run-id to import it again under another id`,
    );
  const copilots = [...new Set(rows.map((r) => r.model.trim()))];
  const rubricVersion = `cab-reference-import`;
  const startedAt = opts.startedAt ?? fs.statSync(file).mtime.toISOString();
  const judge = {
    model: opts.judgeModel ?? 'reference harness judge',
    baseURL: 'cab-results import',
    temperature: 0.1,
  };
  const seen = new Set<string>();
  let failed = 0;
  const judgments: StoredJudgment[] = rows.map((r, i) => {
    const at = `${where}: row ${i + 2}`;
    const queryId = idOf.get(normalizeText(r.query.trim()))!;
    const copilot = r.model.trim();
    if (seen.has(`${queryId}\u0000${copilot}`)) problems.push(`${at}: a second row for model ${copilot} on this query`);
    seen.add(`${queryId}\u0000${copilot}`);
    const scores: Record<string, number> = {};
    for (const d of CAB_DIMENSIONS) {
      const v = Number(r[d]);
      if (!Number.isInteger(v) || v < 1 || v > 10) problems.push(`${at}: ${d} is "${r[d]}", not a whole number 1–10`);
      scores[d] = v;
    }
    const rank = Number(r.rank);
    if (!Number.isInteger(rank) || rank < 1) problems.push(`${at}: rank is "${r.rank}", not a whole number ≥ 1`);
    const rationales: Record<string, string> = {};
    for (const d of CAB_DIMENSIONS) if (r[`${d}_reasoning`]) rationales[d] = r[`${d}_reasoning`];
    if (r.ranking_reasoning) rationales[RANKING_RATIONALE] = r.ranking_reasoning;
    const fillIn =
      hasReasoning &&
      CAB_DIMENSIONS.every((d) => scores[d] === 1 && FILL_IN.some((re) => re.test((r[`${d}_reasoning`] ?? '').trim())));
    if (fillIn) failed++;
    const base = {
      runId,
      queryId,
      copilot,
      rubricVersion,
      rank,
      position: null,
      judge: { ...judge, rubricVersion, seed: null },
      attempts: 1,
      createdAt: startedAt,
    };
    return fillIn
      ? {
          ...base,
          status: 'failed' as const,
          scores: null,
          rationales,
          total: null,
          error: `the reference harness scored this response 1 everywhere: ${rationales.temporal_relevance}`,
        }
      : {
          ...base,
          status: 'ok' as const,
          scores,
          rationales,
          total: CAB_DIMENSIONS.reduce((s, d) => s + scores[d], 0),
          error: null,
        };
  });
  if (problems.length)
    throw new InputError(
      problems.slice(0, 20).join('\n') + (problems.length > 20 ? `\n... and ${problems.length - 20} more` : ''),
    );

  // Stored only once every row is valid: a refused file leaves nothing behind.
  if (!opts.snapshotId)
    await saveSnapshot(store, cabLabels, {
      queries,
      parentId: null,
      meta: { generator: 'import cab-results', source: path.basename(file), sourceHash: digest },
    });
  await store.createRun({
    runId,
    protocol: 'cab',
    snapshotId,
    rubricVersion,
    judge,
    copilots,
    startedAt,
    sourceRunId: null,
    config: { imported: { from: 'cab-results', file: path.resolve(file), sha256: digest }, seed: runId },
  });
  await store.putJudgments(judgments);
  const summary = Object.fromEntries(
    copilots.map((c) => {
      const ok = judgments.filter((j) => j.copilot === c && j.status === 'ok');
      return [c, ok.length ? ok.reduce((s, j) => s + j.total! / CAB_DIMENSIONS.length, 0) / ok.length : null];
    }),
  );
  await store.finishRun(runId, 'completed', null, summary, startedAt);
  return {
    runId,
    snapshotId,
    copilots,
    queries: texts.length,
    judgments: judgments.length,
    failed,
    fillInsUnknown: !hasReasoning,
  };
}
