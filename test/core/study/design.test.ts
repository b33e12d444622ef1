import fs from 'node:fs';
import path from 'node:path';
import { kendallTauB, krippendorffAlphaNominal } from '../../../core/stats/agreement';
import { cohenKappa, wilsonInterval, bradleyTerry, BRADLEY_TERRY_PRIOR } from '../../../core/stats/stats';
import { analyseStudy, judgePreference, type AnnotationFact } from '../../../core/study/analysis';
import { calibratedWinRates } from '../../../core/study/calibrated';
import { seededRandom } from '../../../core/stats/random';
import { balancedOrientation, dealAssignments, planAssignments, planItems } from '../../../core/study/design';
import { renderMarkdown } from '../../../core/study/safeMarkdown';
import { loadStudyOptions } from '../../../rubrics/study/options';
import { studyOptionsSchema } from '../../../core/study/options';
import { InputError } from '../../../core/model/inputError';
import { tempDir } from '../../support/harness';

const copilots = ['A1', 'B2', 'C3', 'D4', 'E5'];
const queries = Array.from({ length: 17 }, (_, i) => `q${i}`);

test('items are every pair on every query where both answered; failed and missing pairs are counted', () => {
  const { items, excluded } = planItems(queries, copilots, (q, c) =>
    q === 'q3' && c === 'C3' ? 'failed' : q === 'q4' && c === 'E5' ? 'missing' : 'ok',
  );
  expect(items).toHaveLength(17 * 10 - 8);
  expect(excluded).toEqual({ failed: 4, missing: 4, pairs: 8 });
  expect(items.every((it) => it.first < it.second)).toBe(true);
});

test.each([1, 2, 3, 11])(
  'left/right is balanced per copilot (±1) and per item with %i per item; dealing is balanced and never repeats an item',
  (perItem) => {
    const { items } = planItems(queries, copilots, () => 'ok');
    const planned = planAssignments(items, perItem, 'seed-x');
    expect(planned).toHaveLength(items.length * perItem);
    for (const c of copilots) {
      const mine = planned.filter((p) => p.left === c || p.right === c);
      const left = mine.filter((p) => p.left === c).length;
      expect(Math.abs(left - mine.length / 2)).toBeLessThanOrEqual(1);
    }
    for (const it of items) {
      const copies = planned.filter((p) => p.itemId === it.itemId);
      expect(Math.abs(copies.filter((p) => p.left === it.first).length - perItem / 2)).toBeLessThanOrEqual(0.5);
    }
    // Randomised: some items show their first copilot on the right.
    expect(planned.some((p) => p.left !== p.itemId.split('|')[1])).toBe(true);
    const n = Math.max(perItem, 7);
    const deal = dealAssignments(
      planned.map((p) => p.slot),
      n,
      'seed-x',
    );
    const loads = Array.from({ length: n }, (_, a) => deal.filter((d) => d.annotator === a).length);
    expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(1);
    const seen = new Set<string>();
    for (const d of deal) {
      const key = `${d.annotator}|${planned[d.slot].itemId}`;
      expect(seen.has(key)).toBe(false);
      seen.add(key);
    }
    // Same seed, same design.
    expect(planAssignments(items, perItem, 'seed-x')).toEqual(planned);
  },
);

test('balancedOrientation handles odd degrees and multi-edges', () => {
  const edges: Array<[string, string]> = [
    ['a', 'b'],
    ['a', 'b'],
    ['a', 'c'],
    ['b', 'c'],
    ['c', 'd'],
    ['a', 'd'],
    ['a', 'd'],
  ];
  const left = balancedOrientation(edges, () => 0.3);
  for (const node of ['a', 'b', 'c', 'd']) {
    const mine = edges.map((e, i) => ({ e, i })).filter(({ e }) => e.includes(node));
    const onLeft = mine.filter(({ e, i }) => (left[i] ? e[0] : e[1]) === node).length;
    expect(Math.abs(onLeft - mine.length / 2)).toBeLessThanOrEqual(1);
  }
});

test('Markdown is rendered with every source character escaped: no script, handler, remote image or javascript: link survives', () => {
  const html = renderMarkdown(
    '# T\n<script>alert(1)</script>\n<img src=x onerror=alert(1)>\n![a](http://evil/x.png)\n[x](javascript:alert(1)) [ok](https://example.org/a"b)\n\n**b** *i* `<c>`\n\n- one\n- two\n\n| h | i |\n|---|---|\n| 1 | <b>2</b> |',
  );
  // Every tag in the output is one the renderer writes, with only its own attributes.
  const tags = [...html.matchAll(/<\/?([a-z0-9]+)([^>]*)>/gi)];
  expect(new Set(tags.map((t) => t[1]))).toEqual(
    new Set([
      'h3',
      'p',
      'br',
      'span',
      'a',
      'strong',
      'em',
      'code',
      'ul',
      'li',
      'table',
      'thead',
      'tbody',
      'tr',
      'th',
      'td',
    ]),
  );
  for (const t of tags) expect(t[2].replace(/\s(href|rel|target|class)="[^"<>]*"/g, '')).toBe('');
  expect(html).not.toMatch(/javascript:|<img|<script/i);
  expect(html).toContain('&lt;script&gt;');
  expect(html).toContain(
    '<a href="https://example.org/a&quot;b" rel="noopener noreferrer nofollow" target="_blank">ok</a>',
  );
  expect(html).toContain('<strong>b</strong> <em>i</em> <code>&lt;c&gt;</code>');
  expect(html).toContain('<ul><li>one</li><li>two</li></ul>');
  expect(html).toContain('<td>&lt;b&gt;2&lt;/b&gt;</td>');
  expect(html).toContain('[image: a]');
});

test('statistics: Wilson, Cohen kappa, Kendall tau-b, Krippendorff alpha, Bradley–Terry', () => {
  const w = wilsonInterval(7, 10)!;
  expect(w.low).toBeCloseTo(0.3968, 3);
  expect(w.high).toBeCloseTo(0.8922, 3);
  expect(wilsonInterval(0, 0)).toBeNull();
  expect(cohenKappa(['a', 'b', 'a', 'b'], ['a', 'b', 'a', 'b'])).toBe(1);
  expect(cohenKappa(['a', 'b', 'a', 'b'], ['b', 'a', 'b', 'a'])).toBe(-1);
  // 2x2 textbook example: po = 0.7, pe = 0.5 → 0.4
  expect(
    cohenKappa(['x', 'x', 'y', 'y', 'x', 'y', 'x', 'y', 'x', 'y'], ['x', 'y', 'y', 'y', 'x', 'x', 'x', 'y', 'x', 'x']),
  ).toBeCloseTo(0.4, 10);
  expect(kendallTauB([1, 2, 3, 4], [10, 20, 30, 40])).toBe(1);
  expect(kendallTauB([1, 2, 3, 4], [4, 3, 2, 1])).toBe(-1);
  expect(kendallTauB([1, 2, 3], [1, 3, 2])).toBeCloseTo(1 / 3, 10);
  // Krippendorff (2011) nominal example, 4 coders × 12 units with missing values: alpha = 0.743.
  const data = [
    ['a', 'a', null, 'a'],
    ['b', 'b', 'c', 'b'],
    ['c', 'c', 'c', 'c'],
    ['c', 'c', 'c', 'c'],
    ['b', 'b', 'b', 'b'],
    ['a', 'b', 'c', 'd'],
    ['d', 'd', 'd', 'd'],
    ['a', 'a', 'b', 'a'],
    ['b', 'b', 'b', 'b'],
    [null, 'e', 'e', 'e'],
    [null, null, 'a', 'a'],
    [null, null, 'c', null],
  ].map((u) => u.filter((v): v is string => v !== null));
  expect(krippendorffAlphaNominal(data)).toBeCloseTo(0.743, 3);
  expect(
    krippendorffAlphaNominal([
      ['a', 'a'],
      ['a', 'a'],
    ]),
  ).toBeNull();
  const bt = bradleyTerry([
    [0, 8, 9],
    [2, 0, 6],
    [1, 4, 0],
  ]).strengths as number[];
  expect(bt[0]).toBeGreaterThan(bt[1]);
  expect(bt[1]).toBeGreaterThan(bt[2]);
  expect(bt.reduce((s, v) => s * v, 1)).toBeCloseTo(1, 6);
});

test('judge preference: higher total wins, within the margin is a tie, a missing judgment gives none', () => {
  const judge = {
    judgeRunId: 'r',
    scores: new Map([
      ['q|X', { total: 70, rationales: null }],
      ['q|Y', { total: 68, rationales: null }],
    ]),
  };
  const item = { itemId: 'q|X|Y', queryId: 'q', first: 'X', second: 'Y' };
  expect(judgePreference(judge, item, 0)).toBe('first');
  expect(judgePreference(judge, item, 2)).toBe('tie');
  expect(judgePreference(judge, { ...item, second: 'Z' }, 0)).toBeNull();
});

test('analysis: a tie majority matched by a tie judge; an item split three ways has no majority', () => {
  const options = loadStudyOptions();
  const items = [
    { itemId: 'q|X|Y', queryId: 'q', first: 'X', second: 'Y' },
    { itemId: 'r|X|Y', queryId: 'r', first: 'X', second: 'Y' },
  ];
  const ans = (choice: 'A' | 'B' | 'tie', itemId: string): AnnotationFact => ({
    itemId,
    left: 'X',
    right: 'Y',
    answer: {
      choice,
      reason: choice === 'tie' ? null : 'accuracy',
      seriousError: false,
      errorType: null,
      comment: null,
    },
  });
  const result = analyseStudy({
    copilots: ['X', 'Y'],
    items,
    options,
    tieMargin: 1,
    seed: 's',
    annotations: [
      ans('tie', 'q|X|Y'),
      ans('tie', 'q|X|Y'),
      ans('A', 'q|X|Y'),
      ans('A', 'r|X|Y'),
      ans('B', 'r|X|Y'),
      ans('tie', 'r|X|Y'),
    ],
    queries: new Map(),
    judges: [
      {
        judgeRunId: 'j',
        scores: new Map([
          ['q|X', { total: 50, rationales: null }],
          ['q|Y', { total: 50.5, rationales: null }],
          ['r|X', { total: 1, rationales: null }],
          ['r|Y', { total: 9, rationales: null }],
        ]),
      },
    ],
  });
  expect(result.judgeHuman[0]).toMatchObject({
    itemsCompared: 1,
    itemsWithoutMajority: 1,
    overall: { n: 1, agreement: 1 },
  });
  expect(result.table7.copilots.X).toMatchObject({ wins: 2, losses: 1, ties: 3, appearances: 6 });
});

test('study options are data, validated at load with clear errors', () => {
  const options = loadStudyOptions();
  expect(options.reasons.map((r) => r.label)).toEqual(['Accuracy', 'Usefulness', 'Reasoning', 'Caution', 'Clarity']);
  expect(options.errorTypes).toHaveLength(5);
  const dir = tempDir();
  const bad = path.join(dir, 'options.yaml');
  fs.writeFileSync(
    bad,
    'choices: [{id: A, label: x}, {id: B, label: y}, {id: tie, label: z}]\nreasons: [{id: acc, label: A, description: d}, {id: acc, label: B, description: e}]\nerrorTypes: []\n',
  );
  expect(() => loadStudyOptions(bad)).toThrow(InputError);
  expect(() => loadStudyOptions(bad)).toThrow(/reasons\[1\]\.id: duplicate id "acc"/);
  expect(studyOptionsSchema.safeParse({ ...options, extra: 1 }).success).toBe(false);
});

test('Bradley–Terry in a study where one copilot wins every comparison equals a converged fit with the documented prior', () => {
  const options = loadStudyOptions();
  const copilots = ['X', 'Y', 'Z'];
  const pairs: Array<[string, string]> = [
    ['X', 'Y'],
    ['X', 'Z'],
    ['Y', 'Z'],
  ];
  const items = ['q1', 'q2', 'q3', 'q4'].flatMap((q) =>
    pairs.map(([a, b]) => ({ itemId: `${q}|${a}|${b}`, queryId: q, first: a, second: b })),
  );
  // X wins everything; Y beats Z on three queries of four.
  const annotations: AnnotationFact[] = items.flatMap((it, n) =>
    [0, 1].map(() => {
      const winner = it.first === 'X' ? 'X' : n % 4 === 3 ? 'Z' : 'Y';
      return {
        itemId: it.itemId,
        left: it.first,
        right: it.second,
        answer: {
          choice: winner === it.first ? 'A' : 'B',
          reason: 'accuracy',
          seriousError: false,
          errorType: null,
          comment: null,
        },
      } as AnnotationFact;
    }),
  );
  const result = analyseStudy({
    copilots,
    items,
    options,
    tieMargin: 0,
    seed: 's',
    annotations,
    queries: new Map(),
    judges: [],
    bootstrapIterations: 50,
  });
  // Reference: Zermelo/MM iterations run to a 1e-13 relative change, with BRADLEY_TERRY_PRIOR pseudo-wins each way per compared pair.
  const wins = copilots.map((c) =>
    copilots.map(
      (d) =>
        annotations.filter(
          (a) => (a.answer.choice === 'A' ? a.left : a.right) === c && (a.left === d || a.right === d) && c !== d,
        ).length,
    ),
  );
  const w = wins.map((row, i) => row.map((v, j) => (i === j ? 0 : v + BRADLEY_TERRY_PRIOR)));
  let p = [1, 1, 1];
  for (let it = 0; it < 1_000_000; it++) {
    const next = p.map(
      (pi, i) =>
        w[i].reduce((s, v) => s + v, 0) /
        p.reduce((s, pj, j) => (j === i ? s : s + (w[i][j] + w[j][i]) / (pi + pj)), 0),
    );
    const g = Math.exp(next.reduce((s, v) => s + Math.log(v), 0) / 3);
    const scaled = next.map((v) => v / g);
    const change = Math.max(...scaled.map((v, i) => Math.abs(v / p[i] - 1)));
    p = scaled;
    if (change < 1e-13) break;
  }
  copilots.forEach((c, i) => expect(Math.abs(result.table7.bradleyTerry[c].strength! / p[i] - 1)).toBeLessThan(0.01));
  expect(result.table7.bradleyTerryFit).toMatchObject({
    converged: true,
    prior: BRADLEY_TERRY_PRIOR,
    groups: [['X', 'Y', 'Z']],
  });
});

describe('calibrated win rates (prediction-powered inference)', () => {
  const copilots = ['X', 'Y', 'Z'];
  const pairs: Array<[string, string]> = [
    ['X', 'Y'],
    ['X', 'Z'],
    ['Y', 'Z'],
  ];
  // Latent quality per (query, copilot); annotators prefer the better answer, the judge is biased towards Z by `bias` points.
  const world = (queries: number, seed: string, bias: number) => {
    const rand = seededRandom(seed);
    const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
    const base: Record<string, number> = { X: 60, Y: 55, Z: 50 };
    const queryIds = Array.from({ length: queries }, (_, q) => `q${q}`);
    const latent = new Map(
      queryIds.flatMap((q) => copilots.map((c) => [`${q}|${c}`, base[c] + 10 * normal()] as const)),
    );
    const scores = new Map(
      queryIds.flatMap((q) =>
        copilots.map(
          (c) =>
            [
              `${q}|${c}`,
              { total: latent.get(`${q}|${c}`)! + (c === 'Z' ? bias : 0) + 4 * normal(), rationales: null },
            ] as const,
        ),
      ),
    );
    return { rand, queryIds, latent, judge: { judgeRunId: 'run', scores } };
  };
  const annotate = (w: ReturnType<typeof world>, labelledQueries: string[], perItem: number) => {
    const items = labelledQueries.flatMap((q) =>
      pairs.map(([a, b]) => ({ itemId: `${q}|${a}|${b}`, queryId: q, first: a, second: b })),
    );
    const annotations: AnnotationFact[] = items.flatMap((it) =>
      Array.from({ length: perItem }, () => {
        const gap = w.latent.get(`${it.queryId}|${it.first}`)! - w.latent.get(`${it.queryId}|${it.second}`)!;
        // Annotators are noisy around the latent gap, and tie when it is small.
        const seen = gap + 6 * (w.rand() - 0.5);
        const choice = Math.abs(seen) < 1 ? 'tie' : seen > 0 ? 'A' : 'B';
        return {
          itemId: it.itemId,
          left: it.first,
          right: it.second,
          answer: {
            choice,
            reason: choice === 'tie' ? null : 'accuracy',
            seriousError: false,
            errorType: null,
            comment: null,
          },
        } as AnnotationFact;
      }),
    );
    return { items, annotations };
  };

  test("with every item annotated it is the annotators' own win rate, whatever the judge", () => {
    const w = world(30, 'all', 8);
    const { items, annotations } = annotate(w, w.queryIds, 3);
    const c = calibratedWinRates({
      copilots,
      queryIds: w.queryIds,
      studyItems: items,
      annotations,
      judge: w.judge,
      tieMargin: 0,
    });
    const analysis = analyseStudy({
      copilots,
      items,
      annotations,
      options: loadStudyOptions(),
      queries: new Map(),
      judges: [],
      tieMargin: 0,
      seed: 's',
      bootstrapIterations: 10,
    });
    expect(c.items).toBe(90);
    expect(c.annotatedItems).toBe(90);
    for (const name of copilots) {
      const x = c.copilots[name];
      expect(Math.abs(x.winRate! - analysis.table7.copilots[name].winRate!)).toBeLessThanOrEqual(0.03);
      expect(x.winRate!).toBeCloseTo(x.humanOnly!, 12);
      expect(x.ci95!.low).toBeLessThanOrEqual(x.winRate!);
      expect(x.ci95!.high).toBeGreaterThanOrEqual(x.winRate!);
      expect(x.moreLabelsToHalve).toBeNull();
      expect(x.moreLabelsNote).toMatch(/every item is annotated/);
    }
    // The biased judge alone overrates Z; the calibrated rate does not.
    expect(c.copilots.Z.judgeOnly!).toBeGreaterThan(c.copilots.Z.winRate! + 0.05);
  });

  test('a judge that agrees with the annotators wherever both answered gives its own rate over the whole run', () => {
    const w = world(60, 'agree', 0);
    const labelled = w.queryIds.slice(0, 10);
    // Annotators here copy the judge's preference.
    const items = labelled.flatMap((q) =>
      pairs.map(([a, b]) => ({ itemId: `${q}|${a}|${b}`, queryId: q, first: a, second: b })),
    );
    const annotations: AnnotationFact[] = items.map((it) => {
      const pref = judgePreference(w.judge, it, 0);
      return {
        itemId: it.itemId,
        left: it.first,
        right: it.second,
        answer: {
          choice: pref === 'first' ? 'A' : pref === 'second' ? 'B' : 'tie',
          reason: 'accuracy',
          seriousError: false,
          errorType: null,
          comment: null,
        },
      } as AnnotationFact;
    });
    const c = calibratedWinRates({
      copilots,
      queryIds: w.queryIds,
      studyItems: items,
      annotations,
      judge: w.judge,
      tieMargin: 0,
    });
    expect(c.annotatedItems).toBe(30);
    for (const name of copilots) expect(c.copilots[name].winRate!).toBeCloseTo(c.copilots[name].judgeOnly!, 12);
    // No disagreement seen is not "no correction": the rule-of-three bound over 10 annotated queries (1 − 0.05^(1/10)) widens it.
    expect(c.copilots.X.moreLabelsNote).toMatch(
      /agreed on all 20 annotated items.*rule of three.*more labels would narrow it/,
    );
    expect(c.copilots.X.noDisagreementBound!).toBeGreaterThanOrEqual(1 - 0.05 ** (1 / 10));
    expect(c.copilots.X.ci95!.high - c.copilots.X.ci95!.low).toBeGreaterThan(2 * (1 - 0.05 ** (1 / 10)) - 1e-9);
    expect(c.copilots.X.moreLabelsToHalve).toBeGreaterThan(0);
  });

  test('covers the true win rate with a biased judge and a fifth of the items annotated, and says how many labels would halve the interval', () => {
    // The truth: the annotators' win rate over a very large run of the same world.
    const truthWorld = world(3000, 'truth', 8);
    const truth = annotate(truthWorld, truthWorld.queryIds, 1);
    const zWins = truth.annotations.filter(
      (x) => (x.answer.choice === 'A' ? x.left : x.answer.choice === 'B' ? x.right : null) === 'Z',
    ).length;
    const zDecisive = truth.annotations.filter(
      (x) => x.answer.choice !== 'tie' && (x.left === 'Z' || x.right === 'Z'),
    ).length;
    const truthRates = { Z: { winRate: zWins / zDecisive } };
    let covered = 0;
    let judgeCovered = 0;
    const runs = 60;
    let more: number | null = null;
    for (let r = 0; r < runs; r++) {
      const w = world(100, `run${r}`, 8);
      const { items, annotations } = annotate(w, w.queryIds.slice(0, 20), 1);
      const c = calibratedWinRates({
        copilots,
        queryIds: w.queryIds,
        studyItems: items,
        annotations,
        judge: w.judge,
        tieMargin: 0,
      }).copilots.Z;
      if (c.ci95!.low <= truthRates.Z.winRate! && truthRates.Z.winRate! <= c.ci95!.high) covered++;
      if (Math.abs(c.judgeOnly! - truthRates.Z.winRate!) < 0.02) judgeCovered++;
      more ??= c.moreLabelsToHalve;
    }
    // 95% nominal; with 60 runs anything from 51 up is consistent with it (binomial 1st percentile ≈ 53).
    expect(covered).toBeGreaterThanOrEqual(51);
    // The judge alone is off by more than 2 points nearly every time (it favours Z).
    expect(judgeCovered).toBeLessThan(10);
    expect(more).toBeGreaterThan(0);
  });
});
