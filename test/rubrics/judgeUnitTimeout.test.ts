import { judgeUnitTimeoutMs, JUDGE_UNIT_SLACK_MS } from '../../core/model/protocol';
import { protocolFor } from '../../rubrics';

/** The judge activity's start-to-close timeout must cover every call a unit can make, re-asks included. */
describe('judge unit timeout', () => {
  const t = 120_000;
  const cab = protocolFor('cab');
  const lattice = protocolFor('lattice');
  const cabRubric = cab.loadRubric(cab.defaultRubricDir);
  const latticeRubric = lattice.loadRubric(lattice.defaultRubricDir);

  test('a 6-copilot CryptoAnalystBench unit with the error taxonomy gets room for 39 calls (the old fixed bound gave 20)', () => {
    expect(cabRubric.judge.maxInvalidAnswers).toBe(2);
    const ms = judgeUnitTimeoutMs(cab, 6, { errorTaxonomy: true }, t, cabRubric.judge.maxInvalidAnswers);
    expect(ms).toBe(39 * t + JUDGE_UNIT_SLACK_MS);
    expect(ms).toBeGreaterThan(t * 20 + 60_000);
  });

  test('without the taxonomy: scoring turns and one ranking, each with its re-asks', () => {
    expect(judgeUnitTimeoutMs(cab, 4, {}, t, cabRubric.judge.maxInvalidAnswers)).toBe(
      (4 + 1) * 3 * t + JUDGE_UNIT_SLACK_MS,
    );
    expect(judgeUnitTimeoutMs(cab, 1, {}, t, cabRubric.judge.maxInvalidAnswers)).toBe(3 * t + JUDGE_UNIT_SLACK_MS);
  });

  test('a LATTICE unit is one response: one call and its re-asks', () => {
    expect(judgeUnitTimeoutMs(lattice, 1, {}, t, latticeRubric.judge.maxInvalidAnswers)).toBe(
      (1 + latticeRubric.judge.maxInvalidAnswers) * t + JUDGE_UNIT_SLACK_MS,
    );
  });
});
