import { consensusJudgments } from '../../../core/stats/consensus';
import { panelFigures } from '../../../core/stats/panel';
import { allDimensions } from '../../../core/model/protocol';
import { reliability } from '../../../core/stats/reliability';
import { workItems } from '../../../core/model/workItems';
import type { StoredJudgment } from '../../../core/model/types';
import { aJudgment } from '../../stores/contract';
import { seededRandom } from '../../../core/stats/random';

const v = (queryId: string, copilot: string, over: Partial<StoredJudgment>) =>
  aJudgment('r1', queryId, copilot, { rank: null, position: null, ...over });

describe('work items', () => {
  test('sample by sample, unit by unit, judges adjacent (item i belongs to judge i mod judges); sample s rotates the order by s', () => {
    const items = workItems(
      [
        { queryId: 'q1', copilots: ['A', 'B', 'C'] },
        { queryId: 'q2', copilots: ['B'] },
      ],
      2,
      ['x', 'y'],
    );
    expect(items.map((i) => `${i.queryId}/${i.sample ?? 0}/${i.judge}/${i.copilots.join('')}`)).toEqual([
      'q1/0/x/ABC',
      'q1/0/y/ABC',
      'q2/0/x/B',
      'q2/0/y/B',
      'q1/1/x/BCA',
      'q1/1/y/BCA',
      'q2/1/x/B',
      'q2/1/y/B',
    ]);
    // Asked once by one judge: exactly the protocol's units.
    expect(workItems([{ queryId: 'q1', copilots: ['A', 'B'] }], 1, [''])).toEqual([
      { queryId: 'q1', copilots: ['A', 'B'] },
    ]);
  });
});

describe('consensus verdicts', () => {
  test("one verdict per response: mean of a judge's ok samples, then the panel aggregate; failed samples left out; single verdicts untouched", () => {
    const single = v('q0', 'A', { total: 42 });
    const rows = [
      single,
      v('q1', 'A', { judgeName: 'x', sample: 0, scores: { d1: 4 }, total: 40 }),
      v('q1', 'A', { judgeName: 'x', sample: 1, scores: { d1: 6 }, total: 60 }),
      v('q1', 'A', { judgeName: 'x', sample: 2, status: 'failed', scores: null, total: null, error: 'bad' }),
      v('q1', 'A', { judgeName: 'y', sample: 0, scores: { d1: 9 }, total: 90 }),
      v('q1', 'A', { judgeName: 'z', sample: 0, scores: { d1: 1 }, total: 10 }),
      v('q2', 'A', { sample: 0, status: 'failed', scores: null, total: null, error: 'e0' }),
      v('q2', 'A', { sample: 1, status: 'failed', scores: null, total: null, error: 'e1' }),
    ];
    const [a, b, c] = consensusJudgments(rows);
    expect(a).toBe(single);
    expect(b).toMatchObject({ status: 'ok', scores: { d1: (5 + 9 + 1) / 3 }, total: (50 + 90 + 10) / 3 });
    expect(consensusJudgments(rows, 'median')[1]).toMatchObject({ scores: { d1: 5 }, total: 50 });
    expect(c).toMatchObject({ status: 'failed', error: 'all 2 verdicts failed; first: e0' });
  });

  test("ranks: the mean rank over samples, turned back into a rank among the query's copilots", () => {
    const rows = ['A', 'B', 'C'].flatMap((c, i) =>
      [0, 1].map((s) => v('q1', c, { sample: s, total: 10, rank: ((i + s) % 3) + 1 })),
    );
    // Mean ranks: A (1+2)/2 = 1.5, B (2+3)/2 = 2.5, C (3+1)/2 = 2.
    expect(consensusJudgments(rows).map((j) => `${j.copilot}${j.rank}`)).toEqual(['A1', 'B3', 'C2']);
  });
});

describe('reliability', () => {
  test('none for one sample; noise-free samples give alpha 1 and no spread; failed samples are counted', () => {
    const steady = ['q1', 'q2', 'q3'].flatMap((q, i) =>
      [0, 1].map((s) => v(q, 'A', { sample: s, scores: { d1: i * 3 }, total: i * 30 })),
    );
    expect(reliability(steady, 1, allDimensions)).toBeNull();
    const r = reliability(
      [
        ...steady,
        v('q4', 'A', { sample: 0, scores: { d1: 5 }, total: 50 }),
        v('q4', 'A', { sample: 1, status: 'failed', scores: null, total: null }),
      ],
      2,
      allDimensions,
    )!;
    expect(r.dimensions.d1).toMatchObject({ units: 3, withinUnitSd: 0, disagreeShare: 0, alpha: 1 });
    expect(r).toMatchObject({
      samples: 2,
      units: 4,
      samplesRequested: 8,
      samplesOk: 7,
      samplesFailed: 1,
      unitsWithFailedSamples: 1,
      unitsWithoutScore: 0,
    });
  });

  test('rank-1 changes between samples of a query', () => {
    const rows = [
      v('q1', 'A', { sample: 0, rank: 1 }),
      v('q1', 'B', { sample: 0, rank: 2 }),
      v('q1', 'A', { sample: 1, rank: 2 }),
      v('q1', 'B', { sample: 1, rank: 1 }),
      v('q2', 'A', { sample: 0, rank: 1 }),
      v('q2', 'B', { sample: 0, rank: 2 }),
      v('q2', 'A', { sample: 1, rank: 1 }),
      v('q2', 'B', { sample: 1, rank: 2 }),
    ];
    expect(reliability(rows, 2, allDimensions)!.rank1Changes).toEqual({ queries: 2, changed: 1, rate: 0.5 });
  });
});

describe('panel figures', () => {
  test('per-judge leaderboards, perfect agreement of shifted judges by consistency, self-preference with and without the judge', () => {
    const judges = [
      { name: 'j1', model: 'm1' },
      { name: 'j2', model: 'm2', family: 'acme' },
    ];
    const rows: StoredJudgment[] = [];
    ['q1', 'q2', 'q3'].forEach((q, i) =>
      (['A', 'B'] as const).forEach((c, k) => {
        const base = 10 * i + 5 * k;
        rows.push(v(q, c, { judgeName: 'j1', scores: { d1: base }, total: base }));
        rows.push(
          v(q, c, { judgeName: 'j2', scores: { d1: base + (c === 'B' ? 4 : 0) }, total: base + (c === 'B' ? 4 : 0) }),
        );
      }),
    );
    const p = panelFigures({
      rows,
      judges,
      copilotFamilies: { A: undefined, B: 'acme' },
      aggregate: 'mean',
      scoreKey: allDimensions,
    })!;
    expect(p.leaderboards.j1).toEqual({ A: { score: 10, n: 3 }, B: { score: 15, n: 3 } });
    expect(p.leaderboards.j2.B).toEqual({ score: 19, n: 3 });
    expect(p.rankCorrelation).toEqual([{ a: 'j1', b: 'j2', kendallTau: 1 }]);
    expect(p.agreement.d1.units).toBe(6);
    expect(p.agreement.d1.alpha).toBeGreaterThan(0.5);
    // j2 adds 4 to its family's copilot only and nothing else: its own-family term is exactly 4 with every query left
    // out; two judges keep the offset-only model; 3 queries are below the minimum, so nothing is flagged.
    expect(p.selfPreference).toHaveLength(1);
    expect(p.selfPreference[0]).toMatchObject({
      judge: 'j2',
      copilot: 'B',
      family: 'acme',
      flagged: false,
      model: 'offset only (two judges)',
      queries: 3,
    });
    expect(p.selfPreference[0].difference).toBeCloseTo(4, 9);
    expect(p.selfPreference[0].ci95!.low).toBeCloseTo(4, 9);
    expect(p.disagreements.map((d) => `${d.queryId}/${d.copilot}/${d.range}`)).toEqual(['q1/B/4', 'q2/B/4', 'q3/B/4']);
    expect(
      panelFigures({ rows, judges: [judges[0]], copilotFamilies: {}, aggregate: 'mean', scoreKey: allDimensions }),
    ).toBeNull();
  });
});

describe('self-preference', () => {
  // Synthetic per-query totals on 0–100: copilot quality + query difficulty + answer-specific quality + judge noise.
  const simulate = (shift: (judge: string, copilot: string) => number, seed: string) => {
    const rand = seededRandom(seed);
    const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
    const quality: Record<string, number> = { O: 62, A: 55, X: 70 };
    const rows: StoredJudgment[] = [];
    for (let q = 0; q < 40; q++) {
      const difficulty = 8 * normal();
      for (const c of Object.keys(quality)) {
        const answer = quality[c] + difficulty + 5 * normal();
        for (const judge of ['n1', 'n2', 'lenient', 'selfish']) {
          const total = answer + shift(judge, c) + 4 * normal();
          rows.push(v(`q${q}`, c, { judgeName: judge, scores: { d1: total }, total }));
        }
      }
    }
    return rows;
  };
  const judges = [
    { name: 'n1', model: 'm1' },
    { name: 'n2', model: 'm2' },
    { name: 'lenient', model: 'gpt', family: 'openai' },
    { name: 'selfish', model: 'claude', family: 'acme' },
  ];
  const copilotFamilies = { O: 'openai', A: 'acme', X: undefined };

  test("a judge lenient to every copilot is not self-preferring; one favouring only its family's copilot is flagged", () => {
    // lenient: +4 to every copilot; selfish: +12 to its family's copilot A only.
    const rows = simulate(
      (judge, copilot) => (judge === 'lenient' ? 4 : judge === 'selfish' && copilot === 'A' ? 12 : 0),
      'self-preference',
    );
    const p = panelFigures({ rows, judges, copilotFamilies, aggregate: 'mean', scoreKey: allDimensions })!;
    const lenient = p.selfPreference.find((s) => s.judge === 'lenient')!;
    const selfish = p.selfPreference.find((s) => s.judge === 'selfish')!;
    expect(p.selfPreference.map((s) => `${s.judge}/${s.copilot}/${s.family}`)).toEqual([
      'lenient/O/openai',
      'selfish/A/acme',
    ]);
    expect(Math.abs(lenient.difference!)).toBeLessThanOrEqual(3);
    expect(lenient.ci95!.low).toBeLessThan(0);
    expect(lenient.ci95!.high).toBeGreaterThan(0);
    expect(lenient.flagged).toBe(false);
    expect(selfish.difference!).toBeGreaterThanOrEqual(10);
    expect(selfish.ci95!.low).toBeGreaterThan(0);
    expect(selfish.flagged).toBe(true);
  });

  test('a judge harsher on its own family is reported with its term and p, but not flagged as self-preferring', () => {
    // selfish here takes 12 off its family's copilot: a clear own-family term, of the wrong sign for self-preference.
    const rows = simulate((judge, copilot) => (judge === 'selfish' && copilot === 'A' ? -12 : 0), 'harsh');
    const p = panelFigures({ rows, judges, copilotFamilies, aggregate: 'mean', scoreKey: allDimensions })!;
    const harsh = p.selfPreference.find((s) => s.judge === 'selfish')!;
    expect(harsh.difference!).toBeLessThanOrEqual(-10);
    expect(harsh.ci95!.high).toBeLessThan(0);
    expect(harsh.pHolm!).toBeLessThan(0.05);
    expect(harsh.flagged).toBe(false);
  });

  test('is null when the design cannot separate it from leniency', () => {
    // Every judge is of the copilot's family: the own-family terms are the judges' leniency on it, aliased.
    const rows = simulate(() => 0, 'aliased');
    const all = judges.map((j) => ({ ...j, family: 'acme' }));
    const p = panelFigures({
      rows,
      judges: all,
      copilotFamilies: { O: undefined, A: 'acme', X: undefined },
      aggregate: 'mean',
      scoreKey: allDimensions,
    })!;
    expect(p.selfPreference).toHaveLength(4);
    // Only differences between the judges' terms are estimable, not any one of them.
    for (const s of p.selfPreference)
      expect(s).toMatchObject({ copilot: 'A', difference: null, ci95: null, flagged: false });
    // A judge that scored only its own family's copilot cannot be told lenient from self-preferring either.
    const onlyOwn = rows.filter((r) => r.judgeName !== 'selfish' || r.copilot === 'A');
    const q = panelFigures({ rows: onlyOwn, judges, copilotFamilies, aggregate: 'mean', scoreKey: allDimensions })!;
    expect(q.selfPreference.find((s) => s.judge === 'selfish')).toMatchObject({ difference: null, flagged: false });
    expect(q.selfPreference.find((s) => s.judge === 'lenient')!.difference).not.toBeNull();
  });
});
