import { seededRandom } from '../../../core/stats/random';
import { stability, type StabilityRunInput } from '../../../core/stats/stability';
import type { Query } from '../../../core/model/types';

const queries: Query[] = Array.from({ length: 20 }, (_, i) => ({ id: `q${i}`, text: `question number ${i}` }));

/**
 * Three runs, three judge samples per response. Ace answers the same words every time and its true score never moves:
 * only the judge's noise (sd 1) moves its scores. Bolt rewrites its answers each run and its score moves by ±3 with them.
 */
function runs(): StabilityRunInput[] {
  const rng = seededRandom('stability');
  const normal = () => Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
  return [0, 1, 2].map((k) => ({
    runId: `r${k}`,
    startedAt: `2026-12-0${k + 1}T00:00:00Z`,
    copilots: ['Ace', 'Bolt'],
    queries,
    responses: queries.flatMap((q, i) => [
      {
        queryId: q.id,
        copilot: 'Ace',
        status: 'ok',
        text: `Staking ${i} is safe when the validator set is diverse and slashing is rare.`,
      },
      {
        queryId: q.id,
        copilot: 'Bolt',
        status: 'ok',
        text: [
          `Run ${k} thinks ${i} moons soon`,
          `Completely different take number ${k * 7 + i}: sell everything`,
          `Yield farming ${k}${i} beats holding by far`,
        ][k],
      },
    ]),
    judgments: queries.flatMap((q, i) =>
      [0, 1, 2].flatMap((sample) => [
        { queryId: q.id, copilot: 'Ace', status: 'ok', total: 50 + (i % 5) + normal(), sample },
        {
          queryId: q.id,
          copilot: 'Bolt',
          status: 'ok',
          total: 50 + (i % 5) + [0, 3, -3][(k + i) % 3] + normal(),
          sample,
        },
      ]),
    ),
  }));
}

test('a copilot whose answers change and whose scores move beyond the judge noise drifts; one with steady answers only wobbles with the judge', () => {
  const s = stability(runs(), { threshold: 0.8 });
  expect(s.runs.map((r) => r.runId)).toEqual(['r0', 'r1', 'r2']);
  const { Ace, Bolt } = s.copilots;
  expect(Ace).toMatchObject({ compared: 40, meanSimilarity: 1, changedShare: 0, samples: 3, reading: 'judge wobble' });
  // The judge's within-response variance is about its noise (sd 1 → 1); a mean of 3 samples moves with variance ≈ 1/3.
  expect(Ace.judgeVarianceWithinResponse!).toBeGreaterThan(0.6);
  expect(Ace.judgeVarianceWithinResponse!).toBeLessThan(1.5);
  expect(Ace.varianceRatio!).toBeLessThan(2);
  expect(Bolt.changedShare).toBe(1);
  expect(Bolt.meanSimilarity!).toBeLessThan(0.5);
  expect(Bolt.scoreVarianceAcrossRuns!).toBeGreaterThan(5);
  expect(Bolt.reading).toBe('answers drift');
});

test('one run is not enough; without samples the judge noise cannot be separated; unchanged answers with moving scores read as judge drift', () => {
  const [r0, r1] = runs();
  expect(stability([r0]).copilots.Ace.reading).toBe('not enough runs');
  const single = [r0, r1].map((r) => ({ ...r, judgments: r.judgments.filter((j) => j.sample === 0) }));
  expect(stability(single).copilots.Ace).toMatchObject({
    samples: 1,
    judgeVarianceWithinResponse: null,
    reading: 'no judge samples',
  });
  const harsher = {
    ...r1,
    judgments: r1.judgments.map((j) => (j.copilot === 'Ace' ? { ...j, total: j.total! - 8 } : j)),
  };
  expect(stability([r0, harsher]).copilots.Ace.reading).toBe('judge drift');
});
