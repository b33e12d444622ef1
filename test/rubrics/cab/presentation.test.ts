import {
  buildPresentationDesign,
  predecessorImbalance,
  williamsDesign,
  type PresentationDesign,
  type PresentationInput,
} from '../../../rubrics/cab/presentation';
import { readCabPlan } from '../../../rubrics/cab/plan';

const copilotsOf = (n: number): string[] => Array.from({ length: n }, (_, i) => `sys-${String.fromCharCode(65 + i)}`);

function fullInput(n: number, q: number, seed = 'seed-1'): PresentationInput {
  // Copilots listed in reverse to check that input order does not matter.
  return {
    seed,
    queries: Array.from({ length: q }, (_, i) => ({ queryId: `q${i}`, copilots: copilotsOf(n).reverse() })),
  };
}

/** Small deterministic LCG so fixtures are stable (tests must not use Math.random either). */
function lcg(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    return a / 4294967296;
  };
}

/** max over copilots and positions of |count − fair share| (fair share: 1/k per query of size k ≥ p). */
function fairShareDeviation(s: PresentationDesign, input: PresentationInput): number {
  const n = Object.keys(s.positionCounts).length;
  const fair = new Map<string, number[]>();
  for (const q of input.queries) {
    for (const sys of q.copilots) {
      const row = fair.get(sys) ?? new Array<number>(n).fill(0);
      for (let p = 0; p < q.copilots.length; p++) row[p] = (row[p] as number) + 1 / q.copilots.length;
      fair.set(sys, row);
    }
  }
  let worst = 0;
  for (const [sys, counts] of Object.entries(s.positionCounts)) {
    counts.forEach((c, p) => {
      worst = Math.max(worst, Math.abs(c - ((fair.get(sys) as number[])[p] as number)));
    });
  }
  return worst;
}

function expectOrdersArePermutations(s: PresentationDesign, input: PresentationInput): void {
  expect(Object.keys(s.orders)).toEqual(input.queries.map((q) => q.queryId));
  for (const q of input.queries) {
    expect([...(s.orders[q.queryId] as string[])].sort()).toEqual([...q.copilots].sort());
  }
}

const QS = [...Array.from({ length: 60 }, (_, i) => i + 1), 198, 1000];

describe('williamsDesign', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8, 9, 12])('n=%i: Latin halves and balanced carryover', (n) => {
    const rows = williamsDesign(n);
    const cycle = n % 2 === 0 ? n : 2 * n;
    expect(rows).toHaveLength(cycle);
    // Each half of n rows is a Latin square (rows and columns are permutations).
    for (let h = 0; h < rows.length; h += n) {
      const half = rows.slice(h, h + n);
      for (const row of half) expect([...row].sort((a, b) => a - b)).toEqual([...Array(n).keys()]);
      for (let p = 0; p < n; p++) expect(new Set(half.map((r) => r[p])).size).toBe(n);
    }
    const adj = new Map<string, number>();
    for (const row of rows)
      for (let p = 1; p < n; p++) adj.set(`${row[p - 1]}>${row[p]}`, (adj.get(`${row[p - 1]}>${row[p]}`) ?? 0) + 1);
    expect(adj.size).toBe(n * (n - 1));
    for (const c of adj.values()) expect(c).toBe(n % 2 === 0 ? 1 : 2);
  });
});

describe('buildPresentationDesign: all copilots present', () => {
  for (let n = 2; n <= 7; n++) {
    it(`N=${n}: position counts within ⌊Q/N⌋..⌈Q/N⌉ and carryover balance for Q in 1..60, 198, 1000`, () => {
      const cycle = n % 2 === 0 ? n : 2 * n;
      for (const q of QS) {
        const input = fullInput(n, q, `seed-${n}-${q}`);
        const s = buildPresentationDesign(input);
        expectOrdersArePermutations(s, input);
        const lo = Math.floor(q / n);
        const hi = Math.ceil(q / n);
        for (const counts of Object.values(s.positionCounts)) {
          expect(counts).toHaveLength(n);
          for (const c of counts) {
            expect(c).toBeGreaterThanOrEqual(lo);
            expect(c).toBeLessThanOrEqual(hi);
          }
        }
        for (let p = 0; p < n; p++) {
          const col = Object.values(s.positionCounts).map((c) => c[p] as number);
          expect(Math.max(...col) - Math.min(...col)).toBeLessThanOrEqual(1);
        }
        const imbalance = predecessorImbalance(s);
        if (q % cycle === 0) expect(imbalance).toBe(0);
        // Partial cycle ⊂ one cycle: ≤ 1 for even N (pairs once per cycle), ≤ 2 for odd N.
        expect(imbalance).toBeLessThanOrEqual(n % 2 === 0 ? 1 : 2);
      }
    });
  }

  it('N=1 and N=12 work', () => {
    const one = buildPresentationDesign(fullInput(1, 5));
    expect(one.orders.q0).toEqual(['sys-A']);
    expect(one.positionCounts).toEqual({ 'sys-A': [5] });
    expect(predecessorImbalance(one)).toBe(0);

    const twelve = buildPresentationDesign(fullInput(12, 36));
    for (const counts of Object.values(twelve.positionCounts)) expect(counts).toEqual(new Array(12).fill(3));
    expect(predecessorImbalance(twelve)).toBe(0);
  });

  it('predecessorCounts holds every ordered pair, and counts adjacencies in the orders', () => {
    const input = fullInput(4, 10);
    const s = buildPresentationDesign(input);
    let total = 0;
    for (const a of copilotsOf(4)) {
      expect(Object.keys(s.predecessorCounts[a] as object).sort()).toEqual(copilotsOf(4).filter((b) => b !== a));
      total += Object.values(s.predecessorCounts[a] as Record<string, number>).reduce((x, y) => x + y, 0);
    }
    expect(total).toBe(10 * 3);
  });

  it('10,000 queries × 12 copilots: full queries repeat the 12-row design cycle instead of searching per query', () => {
    // How long this takes is a figure printed by `npm run bench`; here we check why it is cheap.
    const input = fullInput(12, 10_000);
    const s = buildPresentationDesign(input);
    for (const counts of Object.values(s.positionCounts)) for (const c of counts) expect([833, 834]).toContain(c);
    const orders = input.queries.map((q) => s.orders[q.queryId]!.join(' '));
    expect(new Set(orders).size).toBe(12);
    expect(orders.filter((order, i) => order !== orders[i % 12])).toEqual([]);
    expect(predecessorImbalance(s)).toBeLessThanOrEqual(1); // a partial cycle at the end (10,000 = 833 × 12 + 4)
  });
});

describe('buildPresentationDesign: determinism and seeding', () => {
  it('same seed and input → identical design, regardless of how copilots are listed', () => {
    const a = buildPresentationDesign(fullInput(5, 37, 'alpha'));
    const b = buildPresentationDesign(fullInput(5, 37, 'alpha'));
    expect(b).toEqual(a);
    const shuffledListing: PresentationInput = {
      seed: 'alpha',
      queries: fullInput(5, 37).queries.map((q, i) => ({
        ...q,
        copilots: i % 2 ? q.copilots : [...q.copilots].sort(),
      })),
    };
    expect(buildPresentationDesign(shuffledListing)).toEqual(a);
  });

  it('different seeds → (usually) different designs', () => {
    const base = JSON.stringify(buildPresentationDesign(fullInput(5, 20, 'alpha')).orders);
    const others = ['beta', 'gamma', 'delta', 'alpha2', 'alphA'].map((seed) =>
      JSON.stringify(buildPresentationDesign(fullInput(5, 20, seed)).orders),
    );
    expect(others.filter((o) => o !== base).length).toBeGreaterThanOrEqual(4);
    // Position 1 of the first query moves around across seeds.
    const firsts = new Set(
      Array.from(
        { length: 30 },
        (_, i) => (buildPresentationDesign(fullInput(5, 1, `s${i}`)).orders.q0 as string[])[0],
      ),
    );
    expect(firsts.size).toBeGreaterThanOrEqual(3);
  });
});

describe('buildPresentationDesign: missing copilots', () => {
  it('3 of 4 present in some queries: positions within 1.5 of fair share', () => {
    for (let trial = 0; trial < 40; trial++) {
      const rand = lcg(trial + 1);
      const q = 5 + Math.floor(rand() * 200);
      const input: PresentationInput = {
        seed: `miss-${trial}`,
        queries: Array.from({ length: q }, (_, i) => {
          const copilots = copilotsOf(4);
          if (rand() < 0.4) copilots.splice(Math.floor(rand() * 4), 1);
          return { queryId: `q${i}`, copilots };
        }),
      };
      const s = buildPresentationDesign(input);
      expectOrdersArePermutations(s, input);
      expect(fairShareDeviation(s, input)).toBeLessThanOrEqual(1.5);
      // Nobody is shown in position 4 more often than the full queries allow.
      const full = input.queries.filter((x) => x.copilots.length === 4).length;
      for (const counts of Object.values(s.positionCounts)) expect(counts[3]).toBeLessThanOrEqual(Math.ceil(full / 4));
    }
  });

  it('random subsets of sizes 1..6 of 6: positions within 1.5 of fair share', () => {
    for (let trial = 0; trial < 40; trial++) {
      const rand = lcg(1000 + trial);
      const input: PresentationInput = {
        seed: `mixed-${trial}`,
        queries: Array.from({ length: 1 + Math.floor(rand() * 150) }, (_, i) => {
          const copilots = copilotsOf(6);
          const k = 1 + Math.floor(rand() * 6);
          while (copilots.length > k) copilots.splice(Math.floor(rand() * copilots.length), 1);
          return { queryId: `q${i}`, copilots };
        }),
      };
      const s = buildPresentationDesign(input);
      expectOrdersArePermutations(s, input);
      expect(fairShareDeviation(s, input)).toBeLessThanOrEqual(1.5);
    }
  });

  it('same subset throughout (no full query): exact ±1 balance over that subset', () => {
    for (const q of [1, 2, 3, 10, 29, 300]) {
      const input: PresentationInput = {
        seed: 'subset',
        queries: [
          { queryId: 'lonely', copilots: ['sys-D'] },
          ...Array.from({ length: q }, (_, i) => ({ queryId: `q${i}`, copilots: copilotsOf(3) })),
        ],
      };
      const s = buildPresentationDesign(input);
      expectOrdersArePermutations(s, input);
      for (const sys of copilotsOf(3)) {
        for (const c of (s.positionCounts[sys] as number[]).slice(0, 3)) {
          expect(c).toBeGreaterThanOrEqual(Math.floor(q / 3));
          expect(c).toBeLessThanOrEqual(Math.ceil(q / 3));
        }
      }
    }
  });

  it('full queries keep the Williams guarantees when partial queries are mixed in', () => {
    const queries = Array.from({ length: 48 }, (_, i) => ({ queryId: `f${i}`, copilots: copilotsOf(4) }));
    queries.splice(7, 0, { queryId: 'p1', copilots: copilotsOf(3) }, { queryId: 'p2', copilots: ['sys-B', 'sys-D'] });
    const s = buildPresentationDesign({ seed: 'mix', queries });
    const fullOnly = buildPresentationDesign({ seed: 'mix', queries: queries.filter((q) => q.copilots.length === 4) });
    for (let i = 0; i < 48; i++) expect(s.orders[`f${i}`]).toEqual(fullOnly.orders[`f${i}`]);
    expect(predecessorImbalance(fullOnly)).toBe(0);
  });

  it('empty queries and queries with one copilot', () => {
    const s = buildPresentationDesign({
      seed: 'x',
      queries: [
        { queryId: 'a', copilots: [] },
        { queryId: 'b', copilots: ['sys-A'] },
        { queryId: 'c', copilots: ['sys-A', 'sys-B'] },
      ],
    });
    expect(s.orders).toEqual({ a: [], b: ['sys-A'], c: expect.any(Array) });
    expect(buildPresentationDesign({ seed: 'x', queries: [] })).toEqual({
      orders: {},
      positionCounts: {},
      predecessorCounts: {},
    });
  });
});

describe('buildPresentationDesign: validation', () => {
  it('rejects a duplicate copilot within a query', () => {
    expect(() =>
      buildPresentationDesign({ seed: 's', queries: [{ queryId: 'q1', copilots: ['a', 'b', 'a'] }] }),
    ).toThrow(/duplicate copilot "a" in query "q1"/);
  });

  it('rejects a duplicate queryId', () => {
    expect(() =>
      buildPresentationDesign({
        seed: 's',
        queries: [
          { queryId: 'q1', copilots: ['a'] },
          { queryId: 'q1', copilots: ['b'] },
        ],
      }),
    ).toThrow(/duplicate queryId "q1"/);
  });

  it('treats "__proto__" as an ordinary id', () => {
    const s = buildPresentationDesign({ seed: 's', queries: [{ queryId: '__proto__', copilots: ['a', 'b'] }] });
    expect(Object.keys(s.orders)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(s.orders)).toBe(Object.prototype);
  });
});

describe('stored plans', () => {
  it('a plan stored before the rename (key `schedule`) still reads as the presentation design', () => {
    const presentation = buildPresentationDesign(fullInput(3, 6));
    const plan = { seed: 'seed-1', presentation, predecessorImbalance: predecessorImbalance(presentation) };
    expect(
      readCabPlan({ seed: 'seed-1', schedule: presentation, predecessorImbalance: plan.predecessorImbalance }),
    ).toEqual(plan);
    expect(readCabPlan(plan)).toEqual(plan);
    expect(readCabPlan(undefined)).toBeUndefined();
  });
});
