import { scaleChart, scaleScenarios, scaleTable } from '../../client/commands/bench';
import type { RunFigures } from '../../client/benchRuns';

/** `judgeflow bench --only scale`'s scenarios and the table docs/bench.md copies (the runs themselves are bench work, not tests). */
test('a scale factor is the paper run times that size at zero latency, on SQLite with one worker and on PostgreSQL with two beside a small run', () => {
  const [sqlite, postgres] = scaleScenarios(10);
  expect(sqlite).toMatchObject({ queries: 12_000, copilots: 6, latencyMs: 0 });
  expect([sqlite.store, sqlite.workers, sqlite.alongside]).toEqual([undefined, undefined, undefined]); // SQLite, one worker, alone
  expect(postgres).toMatchObject({
    queries: 12_000,
    copilots: 6,
    latencyMs: 0,
    workers: 2,
    store: 'postgres',
    alongside: { queries: 34 },
  });
  expect(scaleScenarios(0.05)[1]).toMatchObject({ queries: 60, alongside: { queries: 34 } });
  expect(scaleScenarios(0.01)[1]).toMatchObject({ queries: 12, alongside: { queries: 12 } }); // a small run no bigger than the big one
});

const figures = (factor: number, wallS: number, extra: Partial<RunFigures> = {}): RunFigures => ({
  scenario: scaleScenarios(factor)[1],
  wallS,
  boundS: 0,
  llmCalls: 0,
  refused: 0,
  workerCpuMs: 14_400 * factor * 10,
  workerPeakMB: 300,
  serverPeakMB: 200,
  histories: 3 * factor,
  largestHistory: 4_000,
  largestHistoryBytes: 600_000,
  historySizes: [],
  storeMB: 30 * factor,
  overlapped: true,
  ...extra,
});

test('the table gives items per second, CPU and store per item, and the small run beside it as multiples of its time alone', () => {
  const alongside = { queries: 34, aloneS: 10, samePriorityS: 13, firstPriorityS: 11 };
  const table = scaleTable([
    figures(1, 144, {
      reportS: 2.5,
      reportPeakMB: 280,
      postgresWrites: { rowsPerS: 412.4, commitsPerS: 98.6 },
      alongside,
    }),
    figures(3, 480),
  ]);
  const [one, three] = table.split('\n').slice(2);
  // 1,200 × 6 answers and as many judgments: 14,400 items in 144 s. The workers also did two small runs of 408 items
  // beside it (144,000 ms over 15,216 items), and the store holds three (30 MB over 15,624 items).
  expect(one).toContain(
    '| 14400 | 144.0 | 100.0 | 9.5 | 300 | 3 | 4000 / 0.60 | 30.0 | 1.92 | 2.5 | 280 | 412 / 99 | 10.0 / 13.0 (1.30×) / 11.0 (1.10×) |',
  );
  expect(three).toContain('| 43200 | 480.0 | 90.0 | 10.0 |');
  expect(three.endsWith('| – | – | – | – |')).toBe(true);
  const chart = scaleChart([figures(1, 144), figures(3, 480)]).split('\n');
  expect(chart[1]).toMatch(/█{30} 100\.0$/);
  expect(chart[2]).toMatch(/ █{27} 90\.0$/);
});
