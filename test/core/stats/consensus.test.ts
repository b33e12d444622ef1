import { consensusJudgments, PANEL_QUORUM_ERROR } from '../../../core/stats/consensus';
import { minJudgesOf } from '../../../core/llm/judgeConfig';
import type { StoredJudgment } from '../../../core/model/types';

const verdict = (judgeName: string, total: number | null, error: string | null = null): StoredJudgment =>
  ({
    runId: 'r',
    queryId: 'q1',
    copilot: 'A',
    rubricVersion: 'rv',
    status: total === null ? 'failed' : 'ok',
    scores: total === null ? null : { D1: total },
    rationales: null,
    total,
    rank: null,
    position: null,
    error,
    judge: {} as never,
    attempts: 1,
    createdAt: '',
    sample: 0,
    judgeName,
  }) as StoredJudgment;

describe('a panel verdict needs panel.minJudges judges', () => {
  const rows = [
    verdict('a', 60),
    verdict('b', null, 'HTTP 400'),
    verdict('c', null, 'timeout'),
    verdict('d', 80),
    verdict('e', null, 'HTTP 500'),
  ];

  test('the default quorum is a majority of the panel', () => {
    expect([1, 2, 3, 4, 5].map((n) => minJudgesOf(undefined, n))).toEqual([1, 2, 2, 3, 3]);
    expect(minJudgesOf({ minJudges: 1 }, 5)).toBe(1);
  });

  test('below the quorum the unit is a failure saying how many judged and why the others did not', () => {
    const [unit] = consensusJudgments(rows, 'mean', 3);
    expect(unit).toMatchObject({ status: 'failed', total: null, scores: null });
    expect(unit.error).toBe(
      `${PANEL_QUORUM_ERROR}: 2 of 5 judges gave a verdict, panel.minJudges is 3; b: HTTP 400; c: timeout; e: HTTP 500`,
    );
  });

  test('at the quorum the unit’s score is the aggregate of the judges that gave one', () => {
    expect(consensusJudgments(rows, 'mean', 2)[0]).toMatchObject({ status: 'ok', total: 70 });
  });
});
