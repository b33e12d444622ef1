import { compareRuns, type CompareRun } from '../../../core/compare/compare';
import { diffSnapshots, labelCounts } from '../../../core/snapshots/snapshots';
import type { RunRecord } from '../../../core/model/store';
import type { Query, StoredJudgment, StoredResponse } from '../../../core/model/types';
import { cabProtocol } from '../../../rubrics/cab';
import { planCabAhead } from '../../../rubrics/cab/plan';
import { latticeProtocol } from '../../../rubrics/lattice';

/**
 * One reading of labels: CryptoAnalystBench tags written as a list-style cell (the published CSV's "['DeFi', 'Meme Coins']"),
 * one per line, or as one label are grouped alike by the report, by compare and by snapshot counts and diffs, because
 * all of them read labels through the protocol's labelsOf.
 */
const queries: Query[] = [
  { id: 'q1', text: 'Is PEPE a DeFi play?', tags: "['DeFi', 'Meme Coins']" },
  { id: 'q2', text: 'How does Aave work?', tags: 'DeFi' },
  { id: 'q3', text: 'Are Bored Apes memes?', tags: 'Meme Coins\nNFTs' },
  { id: 'q4', text: 'What is the macro view?' },
];
const systems = ['Ace', 'Bolt'];
const expected = { DeFi: 2, 'Meme Coins': 2, NFTs: 1 };

const run = (runId: string): RunRecord => ({
  runId,
  protocol: 'cab',
  snapshotId: 'snap-x',
  rubricVersion: 'v1',
  judge: { model: 'j', baseURL: 'http://127.0.0.1:1/v1', temperature: 0 },
  copilots: systems,
  status: 'completed',
  startedAt: '2026-03-05T00:00:00Z',
  finishedAt: null,
  reportPath: null,
  sourceRunId: null,
  summary: null,
  config: {},
});

function judgments(runId: string, bump: number): StoredJudgment[] {
  return queries.flatMap((q, i) =>
    systems.map((copilot, k) => {
      const x = 5 + ((i + k + bump) % 4);
      const scores = { relevance: x, temporal_relevance: x, depth: x, data_consistency: x };
      return {
        runId,
        queryId: q.id,
        copilot,
        rubricVersion: 'v1',
        status: 'ok' as const,
        scores,
        rationales: null,
        total: 4 * x,
        rank: k + 1,
        position: k + 1,
        error: null,
        judge: { model: 'j', baseURL: 'http://127.0.0.1:1/v1', temperature: 0, rubricVersion: 'v1' },
        attempts: 1,
        createdAt: '2026-03-05T00:00:00Z',
      };
    }),
  );
}

const responses: StoredResponse[] = queries.flatMap((q) =>
  systems.map((copilot) => ({
    runId: 'A',
    queryId: q.id,
    copilot,
    status: 'ok' as const,
    text: `answer of ${copilot}`,
    raw: null,
    html: null,
    adapter: 'openai',
    startedAt: null,
    finishedAt: null,
    latencyMs: null,
    errorKind: null,
    errorMessage: null,
    conversationId: null,
    context: null,
  })),
);

test('CryptoAnalystBench list-style, multi-line and single tags give the same groups in report, compare and snapshot counts', () => {
  expect(queries.map((q) => cabProtocol.labelsOf(q))).toEqual([
    { tags: ['DeFi', 'Meme Coins'] },
    { tags: ['DeFi'] },
    { tags: ['Meme Coins', 'NFTs'] },
    {},
  ]);

  const report = cabProtocol.buildReport({
    run: run('A'),
    queries,
    responses,
    judgments: judgments('A', 0),
    rubric: cabProtocol.loadRubric(cabProtocol.defaultRubricDir),
    plan: planCabAhead({ queries, copilots: systems, seed: 's' }),
    options: {},
    seed: 's',
    simulated: false,
  }).json as { tags: Record<string, Record<string, { n: number }>> };
  const reportGroups = Object.fromEntries(Object.entries(report.tags).map(([tag, bySystem]) => [tag, bySystem.Ace.n]));
  expect(reportGroups).toEqual(expected);

  const side = (runId: string, bump: number): CompareRun => ({ ...run(runId), judgments: judgments(runId, bump) });
  const comparison = compareRuns(side('A', 0), side('B', 1), queries, cabProtocol);
  const compareGroups = Object.fromEntries(
    Object.entries(comparison.copilots.Ace.groups.tags).map(([tag, d]) => [tag, d.n]),
  );
  expect(compareGroups).toEqual(expected);

  expect(labelCounts(queries, cabProtocol.labelsOf)).toEqual({ tags: expected });
  const diff = diffSnapshots({ id: 'A', queries: queries.slice(1) }, { id: 'B', queries }, cabProtocol.labelsOf);
  expect(Object.fromEntries(Object.entries(diff.counts.tags).map(([tag, c]) => [tag, c.b]))).toEqual(expected);
  expect(diff.counts.tags.DeFi).toEqual({ a: 1, b: 2 });
});

test('LATTICE labels are its task and category, in that order', () => {
  expect(latticeProtocol.labelsOf({ id: 'x', text: 't', task: 'T3', category: 'C2' })).toEqual({
    task: ['T3'],
    category: ['C2'],
  });
  expect(labelCounts([{ id: 'x', text: 't', task: 'T3', category: 'C2' }], latticeProtocol.labelsOf)).toEqual({
    category: { C2: 1 },
    task: { T3: 1 },
  });
});
