/**
 * The statistics blocks of report.json / report.md / report.xlsx, built from judgments whose answers are known:
 * intervals with n, separability tiers, normalised rank on mixed query sizes, length bias.
 */
import path from 'node:path';
import ExcelJS from 'exceljs';
import type { RunRecord } from '../../core/model/store';
import type { Query, StoredJudgment, StoredResponse } from '../../core/model/types';
import { meanCI, pearson, type MeanInterval } from '../../core/stats/stats';
import {
  intervalRequestsOf,
  precomputedIntervals,
  withIntervalsAhead,
  type IntervalRequest,
} from '../../core/stats/intervalsAhead';
import { cabProtocol } from '../../rubrics/cab';
import { buildCabReport } from '../../rubrics/cab/report';
import { loadCabRubric } from '../../rubrics/cab/rubric';
import { latticeProtocol } from '../../rubrics/lattice';
import { buildLatticeReport } from '../../rubrics/lattice/report';
import { loadLatticeRubric } from '../../rubrics/lattice/rubric';
import { tempDir } from '../support/harness';

const judge = { model: 'j', baseURL: 'http://127.0.0.1:1/v1', temperature: 0 };
const runRecord = (protocol: string, copilots: string[]): RunRecord => ({
  runId: `${protocol}-test`,
  protocol,
  snapshotId: 'snap-x',
  rubricVersion: 'v',
  judge,
  copilots,
  status: 'completed',
  startedAt: '2026-01-01T00:00:00Z',
  finishedAt: null,
  reportPath: null,
  sourceRunId: null,
  summary: null,
  config: {},
});
/** A report's input as buildReport gets it, from these queries, answers and verdicts (seed 's', no plan). */
const reportInput = <R>(
  protocol: string,
  copilots: string[],
  rest: { queries: Query[]; responses: StoredResponse[]; judgments: StoredJudgment[]; rubric: R },
) => ({ run: runRecord(protocol, copilots), ...rest, plan: undefined, options: {}, seed: 's', simulated: false });
const response = (queryId: string, copilot: string, words: number): StoredResponse => ({
  runId: 'r',
  queryId,
  copilot,
  status: 'ok',
  text: Array.from({ length: words }, (_, i) => `w${i}`).join(' '),
  raw: null,
  html: null,
  adapter: 'csv',
  startedAt: null,
  finishedAt: null,
  latencyMs: null,
  errorKind: null,
  errorMessage: null,
  conversationId: null,
  context: null,
});
const judgment = (
  queryId: string,
  copilot: string,
  scores: Record<string, number>,
  total: number,
  extra: Partial<StoredJudgment> = {},
): StoredJudgment => ({
  runId: 'r',
  queryId,
  copilot,
  rubricVersion: 'v',
  status: 'ok',
  scores,
  rationales: null,
  total,
  rank: null,
  position: null,
  error: null,
  judge: { ...judge, rubricVersion: 'v' },
  attempts: 1,
  createdAt: '2026-01-01T00:00:00Z',
  ...extra,
});

describe('CryptoAnalystBench report statistics', () => {
  // 40 queries: the first 20 rank A, B, C; the last 20 only A and B (C missing). A is clearly best; B and C
  // differ by a symmetric ±1 pattern (not separable); the judge ranks A, B, C in that order. Longer answers get
  // higher totals for A.
  const Q = 40;
  const queries: Query[] = Array.from({ length: Q }, (_, i) => ({
    id: `q${String(i).padStart(2, '0')}`,
    text: `question ${i}`,
    tags: 'DeFi',
  }));
  const systems = ['A', 'B', 'C'];
  const totalOf = (i: number, s: string) =>
    s === 'A' ? 30 + (i % 5) : s === 'B' ? 20 + (i % 3) : 20 + (i % 3) + (i % 2 ? 1 : -1);
  const responses: StoredResponse[] = [];
  const judgments: StoredJudgment[] = [];
  queries.forEach((q, i) => {
    const present = i < 20 ? systems : ['A', 'B'];
    const order = present.map((_, k) => present[(k + i) % present.length]);
    for (const s of present) {
      const t = totalOf(i, s);
      const d = t / 4;
      responses.push(response(q.id, s, s === 'A' ? 100 + 20 * (i % 5) : 80));
      judgments.push(
        judgment(q.id, s, { relevance: d, temporal_relevance: d, depth: d, data_consistency: d }, t, {
          position: order.indexOf(s) + 1,
          rank: present.indexOf(s) + 1,
        }),
      );
    }
  });
  const rubric = loadCabRubric(cabProtocol.defaultRubricDir);
  const report = buildCabReport(reportInput('cab', systems, { queries, responses, judgments, rubric }));
  const json = report.json as any;

  test('intervals carry n and method; normalised rank corrects for query size', () => {
    expect(json.systems.A.ci95).toMatchObject({ n: 40, method: 't' });
    expect(json.systems.C.ci95.n).toBe(20);
    // B: second of 3 on the first 20 (0.5), or second of 2 (1) → 0.75; C: always last of 3 → 1.
    expect(json.systems.B.normalisedRank).toBeCloseTo(0.75, 12);
    expect(json.systems.C.normalisedRank).toBe(1);
    expect(json.systems.A.normalisedRank).toBe(0);
    expect(json.systems.C.meanRank).toBe(3);
  });

  test('separability: A is its own tier, B and C share one', () => {
    expect(json.separability.tiers).toEqual([['A'], ['B', 'C']]);
    const ab = json.separability.pairs.find((p: any) => p.a === 'A' && p.b === 'B');
    expect(ab).toMatchObject({ n: 40, significant: true });
    const bc = json.separability.pairs.find((p: any) => p.a === 'B' && p.b === 'C');
    expect(bc.n).toBe(20);
    expect(bc.significant).toBe(false);
    expect(json.separability.pairs.every((p: any) => p.pAdjusted >= p.pValue)).toBe(true);
    expect(json.separability.method).toContain('Holm');
  });

  test('length bias: per copilot and for the judge, from the stored texts', () => {
    const a = queries.map((_, i) => [100 + 20 * (i % 5), totalOf(i, 'A')]);
    expect(json.lengthBias.copilots.A.pearson).toBeCloseTo(
      pearson(
        a.map((x) => x[0]),
        a.map((x) => x[1]),
      ),
      12,
    );
    expect(json.lengthBias.copilots.A.pearson).toBeCloseTo(1, 12);
    expect(json.lengthBias.copilots.B.pearson).toBeNull(); // constant length
    expect(json.lengthBias.judge.n).toBe(100);
    expect(json.lengthBias.judge.pearson).toBeGreaterThan(0.5);
  });

  test('report.md and report.xlsx show the new blocks', async () => {
    expect(report.markdown).toContain('## Separability');
    expect(report.markdown).toContain('1. A\n2. B, C');
    expect(report.markdown).toContain('(n 40)');
    expect(report.markdown).toContain('resample queries, not responses');
    expect(report.markdown).toContain('normalised rank');
    expect(report.markdown).toContain('## Length bias');
    expect(report.markdown).toContain('position tested after query and system blocks');
    const file = path.join(tempDir('jf-xlsx-'), 'report.xlsx');
    await report.extra![0].write(file);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    expect(wb.worksheets.map((w) => w.name)).toEqual(
      expect.arrayContaining(['Separability', 'Length Bias', 'Summary', 'Position Bias']),
    );
    const sep = wb.getWorksheet('Separability')!;
    expect(sep.getRow(2).values).toEqual(expect.arrayContaining(['A', 'B', 40, 'yes']));
    const summary = wb.getWorksheet('Summary')!;
    expect(summary.getRow(1).values).toEqual(expect.arrayContaining(['ci95_n', 'normalised_rank']));
  });
});

test('LATTICE report: separability, intervals with n and length bias', () => {
  const rubric = loadLatticeRubric(latticeProtocol.defaultRubricDir);
  const queries: Query[] = Array.from({ length: 30 }, (_, i) => ({
    id: `q${i}`,
    text: `question ${i}`,
    task: 'T1',
    category: 'C1',
  }));
  const copilots = ['Hi', 'Mid1', 'Mid2'];
  const base = (i: number) => 4 + (i % 4);
  const dims = (v: number) => ({ D1: v, D2: v, D3: v, D4: v, D5: v, D6: v });
  const judgments: StoredJudgment[] = [];
  const responses: StoredResponse[] = [];
  queries.forEach((q, i) => {
    for (const c of copilots) {
      const v = c === 'Hi' ? base(i) + 2 : c === 'Mid1' ? base(i) : base(i) + (i % 2 ? 1 : -1) * (i % 3 === 0 ? 1 : 0);
      judgments.push(judgment(q.id, c, dims(v), v * 10));
      responses.push(response(q.id, c, 50 + v * 10));
    }
  });
  const report = buildLatticeReport(reportInput('lattice', copilots, { queries, responses, judgments, rubric }));
  const json = report.json as any;
  expect(json.copilots.Hi.ci95).toMatchObject({ n: 30, method: 't' });
  expect(json.separability.tiers).toEqual([['Hi'], ['Mid2', 'Mid1']].map((t) => expect.arrayContaining(t)));
  expect(json.lengthBias.copilots.Mid1.pearson).toBeCloseTo(1, 12);
  expect(report.markdown).toContain('## Separability');
  expect(report.markdown).toContain('(n 30)');
  expect(report.markdown).toContain('## Length bias');
});

test('LATTICE reportIntervals asks for exactly the intervals buildReport computes, and the report is the same with them computed ahead', () => {
  const rubric = loadLatticeRubric(latticeProtocol.defaultRubricDir);
  // Two queries per task × category: 160 queries, so the leaderboard, Table 5 and the category rows are BCa (n ≥ 100)
  // and the task rows Student t; one copilot has a failed verdict and one refusal query no verdict at all.
  const queries: Query[] = [];
  for (let t = 1; t <= 16; t++)
    for (let c = 1; c <= 5; c++)
      for (const k of [0, 1]) queries.push({ id: `q${t}-${c}-${k}`, text: 'q', task: `T${t}`, category: `C${c}` });
  const copilots = ['A', 'B', 'C'];
  const judgments: StoredJudgment[] = [];
  queries.forEach((q, i) => {
    copilots.forEach((c, k) => {
      if (c === 'C' && q.task === 'T16' && i % 3 === 0) return;
      const v = (i * (k + 3)) % 11;
      const scores: Record<string, number> =
        q.task === 'T16' ? { Refusal: v } : { D1: v, D2: (v + 1) % 11, D3: 5, D4: v, D5: 10 - v, D6: 7 };
      judgments.push(
        c === 'B' && i === 7
          ? judgment(q.id, c, scores, v * 10, { status: 'failed', scores: null, total: null })
          : judgment(q.id, c, scores, v * 10),
      );
    });
  });
  const input = reportInput('lattice', copilots, { queries, responses: [], judgments, rubric });
  const asked = intervalRequestsOf(() => buildLatticeReport(input));
  expect(asked.length).toBeGreaterThan(50);
  expect(asked.filter((r) => r.values.length >= 100).length).toBeGreaterThan(20);
  expect(latticeProtocol.reportIntervals!(input)).toEqual(asked);

  // Computed ahead (here: each answered by a copy of meanCI's own answer), the report is the same, and none is computed
  // again inside it: a request answered ahead with a marked interval shows the mark.
  const computed = asked.map((r): [IntervalRequest, MeanInterval | null] => [r, meanCI(r.values, r)]);
  const plain = buildLatticeReport(input);
  const ahead = withIntervalsAhead(precomputedIntervals(computed), () => buildLatticeReport(input));
  expect({ ...(ahead.json as object), generatedAt: null }).toEqual({ ...(plain.json as object), generatedAt: null });
  const marked = computed.map(([r, ci]): [IntervalRequest, MeanInterval | null] => [r, ci && { ...ci, low: -1 }]);
  const markedReport = withIntervalsAhead(precomputedIntervals(marked), () => buildLatticeReport(input)).json as any;
  expect(markedReport.copilots.A.ci95.low).toBe(-1);
  expect(markedReport.table5.copilots.A.D1.ci95.low).toBe(-1);
});
