import { latticeProtocol } from '../../../rubrics/lattice';
import {
  bucketOf,
  cellText,
  fmt2,
  latticeTables,
  populationSd,
  referenceRound2,
} from '../../../rubrics/lattice/tables';
import type { LatticeRubric } from '../../../rubrics/lattice/rubric';
import { allDimensions, latticeJudgment } from '../../support/latticeJudgment';

const rubric = (latticeProtocol.loadRubric(latticeProtocol.defaultRubricDir) as LatticeRubric).data;

const judgment = latticeJudgment;
const all = allDimensions;

describe("the reference's summaries (build_benchmark.py), computed by hand", () => {
  test('buckets: the low edge is inclusive, 49.99 is in 0-49, 90 in 90-100', () => {
    expect([0, 49.99, 50, 59.9999, 60, 69.5, 70, 80, 89.99, 90, 100].map(bucketOf)).toEqual([
      '0-49',
      '0-49',
      '50-59',
      '50-59',
      '60-69',
      '60-69',
      '70-79',
      '80-89',
      '80-89',
      '90-100',
      '90-100',
    ]);
  });
  test('spread is the population standard deviation; one value has none', () => {
    expect(populationSd([60, 80])).toBe(10);
    expect(populationSd([70])).toBe(0);
    expect(referenceRound2(2.675)).toBe(2.68); // +1e-8 before rounding, as round2 does
  });

  test('tables: Table 5 splits D1–D6 from the refusal dimension, ties go to the first copilot by name, failures count nowhere', () => {
    const queries = [
      { id: 'q1', text: 'a', task: 'T1', category: 'C1' },
      { id: 'q2', text: 'b', task: 'T1', category: 'C2' },
      { id: 'q3', text: 'c', task: 'T16', category: 'C1' },
      { id: 'q4', text: 'd', task: 'T2', category: 'C1' },
    ];
    const judgments = [
      judgment('q1', 'zeta', all(8), 80),
      judgment('q1', 'alpha', all(6), 60),
      judgment('q2', 'zeta', all(7), 70),
      judgment('q2', 'alpha', all(7), 70), // tie: alpha, first by name
      judgment('q3', 'zeta', { Refusal: 9 }, 90),
      judgment('q3', 'alpha', { Refusal: 4 }, 40),
      judgment('q4', 'zeta', null, null),
      judgment('q4', 'alpha', null, null), // nobody scored
    ];
    const t = latticeTables(rubric, queries, ['zeta', 'alpha'], judgments, 'seed');
    expect(t.table5.copilots.zeta.D1).toMatchObject({ mean: 7.5, n: 2 });
    expect(t.table5.copilots.zeta.Refusal).toMatchObject({ mean: 9, n: 1, ci95: null });
    expect(t.table5.copilots.alpha.D1.ci95!.low).toBeLessThan(6.5);
    expect(t.table6.rows[0]).toMatchObject({ task: 'T1', name: 'Protocol Mechanism Interpretation', queries: 2 });
    expect(t.table6.rows[0].copilots.zeta).toMatchObject({ mean: 75, n: 2 });
    expect(t.table6.rows[1].copilots.zeta).toMatchObject({ mean: null, n: 0 }); // T2: its only judgment failed
    expect(t.categoryTable.rows[0]).toMatchObject({ category: 'C1', name: 'Basic', queries: 3 });
    expect(t.categoryTable.rows[0].copilots.alpha.mean).toBe(50);
    expect(t.scoreBuckets.alpha).toEqual({ '0-49': 1, '50-59': 0, '60-69': 1, '70-79': 1, '80-89': 0, '90-100': 0 });
    expect(t.spread.map((s) => s.copilot)).toEqual(['zeta', 'alpha']); // zeta's totals 80, 70, 90 spread less
    expect(t.spread[0].sd).toBeCloseTo(Math.sqrt(200 / 3), 12);
    expect(t.bestPerQuery.queries).toEqual([
      { queryId: 'q1', best: 'zeta', score: 80, tiedWith: [] },
      { queryId: 'q2', best: 'alpha', score: 70, tiedWith: ['zeta'] },
      { queryId: 'q3', best: 'zeta', score: 90, tiedWith: [] },
      { queryId: 'q4', best: null, score: null, tiedWith: [] },
    ]);
    expect(t.bestPerQuery.wins).toEqual({ zeta: 2, alpha: 1 });
    expect(t.bestPerQuery.ties).toBe(1);
  });
});

test('report figures round as the reference prints them (half up after +1e-8), not as toFixed does', () => {
  expect((2.675).toFixed(2)).toBe('2.67'); // the binary value sits just below the half
  expect(fmt2(2.675)).toBe('2.68');
  expect(fmt2(null)).toBe('–');
  expect(cellText({ mean: 7.125, ci95: { low: 6.9, high: 7.35, n: 20, method: 't' }, n: 20 })).toBe(
    '7.13 [6.90, 7.35]',
  );
});
