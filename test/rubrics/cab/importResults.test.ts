import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { toCsv } from '../../../core/io/csv';
import { SqliteStore } from '../../../stores/sqlite';
import { importCabResults } from '../../../rubrics/cab/importResults';
import { gateStoredRuns, trendStoredRuns } from '../../../services/storedComparison';
import { tempDir } from '../../support/harness';

/**
 * A reference run's output in the shape script.py writes it (sheet "Evaluation Results": query, model, rank, each score
 * with its reasoning, ranking_reasoning, tags), with made-up content, imported into a store and read by trend and gate.
 */
const MODELS = ['Sentient', 'gpt5'];
const QUERIES = Array.from({ length: 12 }, (_, i) => `What moved token ${i} this week?`);
const DIMS = ['temporal_relevance', 'data_consistency', 'depth', 'relevance'];
const score = (q: number, m: number, d: number, shift = 0) => Math.min(10, 3 + ((q * 7 + m * 3 + d) % 6) + shift);

function rows(shift: number, failed?: { q: number; m: number }) {
  return QUERIES.flatMap((query, q) =>
    MODELS.map((model, m) => {
      const fill = failed && failed.q === q && failed.m === m;
      const scores = DIMS.map((_, d) => (fill ? 1 : score(q, m, d, m === 1 ? shift : 0)));
      return {
        query,
        model,
        rank: m + 1,
        scores,
        reasoning: fill ? 'Error in evaluation after retries' : `judged ${q}/${m}`,
        tags: q % 2 ? 'DeFi' : 'Markets',
      };
    }),
  );
}

async function workbook(file: string, data: ReturnType<typeof rows>) {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Evaluation Results');
  ws.addRow(['query', 'model', 'rank', ...DIMS.flatMap((d) => [d, `${d}_reasoning`]), 'ranking_reasoning', 'tags']);
  for (const r of data)
    ws.addRow([r.query, r.model, r.rank, ...r.scores.flatMap((s) => [s, r.reasoning]), 'by criteria', r.tags]);
  wb.addWorksheet('Per-Model Statistics');
  await wb.xlsx.writeFile(file);
}

test('a reference workbook and a reference CSV become stored runs that trend and gate read on the mean-of-four scale; fill-ins for failures are failures', async () => {
  const dir = tempDir('jf-cab-import-');
  const store = new SqliteStore(path.join(dir, 'results.db'));
  try {
    const xlsx = path.join(dir, 'evaluation_statistics_20260301.xlsx');
    await workbook(xlsx, rows(0, { q: 3, m: 0 }));
    const a = await importCabResults(store, xlsx, { startedAt: '2026-03-01T00:00:00.000Z' });
    expect(a).toMatchObject({ copilots: MODELS, queries: 12, judgments: 24, failed: 1, fillInsUnknown: false });
    const stored = await store.judgments(a.runId);
    expect(stored.filter((j) => j.status === 'failed').map((j) => [j.copilot, j.queryId])).toEqual([
      ['Sentient', 'q004'],
    ]);
    expect(stored.find((j) => j.copilot === 'gpt5' && j.queryId === 'q001')).toMatchObject({
      status: 'ok',
      rank: 2,
      scores: { temporal_relevance: score(0, 1, 0) },
      rationales: { depth: 'judged 0/1', ranking: 'by criteria' },
    });
    // Importing the same file again is refused, not doubled.
    await expect(importCabResults(store, xlsx)).rejects.toThrow(/already in the results store/);

    // A later reference run as CSV (no reasonings), gpt5 two points better on every dimension, on the same snapshot.
    const csv = path.join(dir, 'final_evaluation_results_20260401.csv');
    const later = rows(2);
    fs.writeFileSync(
      csv,
      toCsv([
        ['query', 'model', 'rank', ...DIMS, 'ranking_reasoning', 'tags'],
        ...later.map((r) => [r.query, r.model, String(r.rank), ...r.scores.map(String), '', r.tags]),
      ]),
    );
    const b = await importCabResults(store, csv, { snapshotId: a.snapshotId, startedAt: '2026-04-01T00:00:00.000Z' });
    expect(b).toMatchObject({ snapshotId: a.snapshotId, failed: 0, fillInsUnknown: true });

    const t = await trendStoredRuns(store, [b.runId, a.runId]);
    expect(t.runs.map((r) => r.runId)).toEqual([a.runId, b.runId]);
    const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / xs.length;
    // Headline per model: the mean over its ok responses of the mean of the four scores (1–10).
    const expectA = mean(QUERIES.map((_, q) => mean(DIMS.map((__, d) => score(q, 1, d)))));
    expect(t.runs[0].copilots.gpt5.score).toBeCloseTo(expectA, 12);
    expect(t.runs[0].copilots.Sentient.n).toBe(11);
    const gate = await gateStoredRuns(store, a.runId, b.runId);
    expect(gate.result.improvements.map((e) => e.copilot)).toEqual(['gpt5']);
    const delta = mean(QUERIES.map((_, q) => mean(DIMS.map((__, d) => score(q, 1, d, 2) - score(q, 1, d)))));
    expect(gate.comparison.copilots.gpt5.overall.delta).toBeCloseTo(delta, 12);
  } finally {
    await store.close();
  }
});

test('a file that is not the reference output is refused with what is missing', async () => {
  const dir = tempDir('jf-cab-import-bad-');
  const store = new SqliteStore(path.join(dir, 'results.db'));
  try {
    const csv = path.join(dir, 'x.csv');
    fs.writeFileSync(
      csv,
      toCsv([
        ['query', 'model', 'score'],
        ['q', 'm', '5'],
      ]),
    );
    await expect(importCabResults(store, csv)).rejects.toThrow(
      /missing columns rank, temporal_relevance, data_consistency, depth, relevance/,
    );
    const bad = path.join(dir, 'y.csv');
    fs.writeFileSync(
      bad,
      toCsv([
        ['query', 'model', 'rank', ...DIMS],
        ['q', 'm', '1', '11', '5', '5', '5'],
      ]),
    );
    await expect(importCabResults(store, bad)).rejects.toThrow(
      /row 2: temporal_relevance is "11", not a whole number 1–10/,
    );
    expect(await store.listRuns()).toEqual([]);
    expect(await store.listSnapshots()).toEqual([]);
  } finally {
    await store.close();
  }
});

test('judgeflow import cab-results through the CLI: stores the run and says how to see it; bad input exits 2 with the reason', async () => {
  const { cliInProcess } = await import('../../support/cliInProcess');
  const home = tempDir('jf-cab-import-cli-');
  const csv = path.join(home, 'final_evaluation_results.csv');
  const data = rows(0);
  fs.writeFileSync(
    csv,
    toCsv([
      ['query', 'model', 'rank', ...DIMS, 'ranking_reasoning', 'tags'],
      ...data.map((r) => [r.query, r.model, String(r.rank), ...r.scores.map(String), '', r.tags]),
    ]),
  );
  const env = { JUDGEFLOW_HOME: home, JUDGEFLOW_STORE: '' };
  const ok = await cliInProcess(
    ['import', 'cab-results', csv, '--run-id', 'ref-1', '--started-at', '2026-02-01T00:00:00Z'],
    env,
  );
  expect(ok.code).toBe(0);
  expect(ok.stdout).toContain('as run ref-1: 12 queries × 2 models (Sentient, gpt5)');
  expect(ok.stdout).toContain('judgeflow trend --runs ...,ref-1');
  const unknown = await cliInProcess(['import', 'lattice-things', csv], env);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('unknown format "lattice-things"; known: lattice-scores, cab-results');
  const missing = await cliInProcess(['import', 'cab-results', path.join(home, 'nope.xlsx')], env);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('no such file');
});
