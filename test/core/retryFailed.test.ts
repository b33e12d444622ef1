import { failedItems } from '../../core/retryFailed';
import type { StoredJudgment, StoredResponse } from '../../core/types';

const response = (queryId: string, copilot: string, status: StoredResponse['status'], errorKind: string | null = null) => ({ queryId, copilot, status, errorKind }) as StoredResponse;
const judgment = (queryId: string, copilot: string, status: StoredJudgment['status'], judgeName = '') => ({ queryId, copilot, status, sample: 0, judgeName }) as StoredJudgment;

describe('failedItems (judgeflow retry --failed)', () => {
  const responses = [response('q1', 'A', 'ok'), response('q1', 'B', 'failed', 'network'), response('q2', 'A', 'failed', 'config'), response('q2', 'B', 'ok')];

  test('a failed answer in a unit shown with others (CAB): the whole unit is judged again, its turns dropped', () => {
    const units = [{ queryId: 'q1', copilots: ['A', 'B'] }, { queryId: 'q2', copilots: ['B'] }];
    const judgments = [judgment('q1', 'A', 'ok'), judgment('q1', 'B', 'failed'), judgment('q2', 'B', 'ok')];
    const items = failedItems(responses, judgments, units, { kind: 'network' });
    expect(items.responses).toEqual([{ queryId: 'q1', copilot: 'B' }]);
    expect(items.judgments).toEqual([{ queryId: 'q1', copilot: 'A', sample: 0, judge: '' }, { queryId: 'q1', copilot: 'B', sample: 0, judge: '' }]);
    expect(items.turns).toEqual([{ queryId: 'q1', sample: 0, judge: '' }]);
  });

  test('a failed answer no unit showed: the query’s units are judged again (they must include the new answer)', () => {
    const units = [{ queryId: 'q2', copilots: ['B'], judge: 'j1' }];
    const items = failedItems(responses, [judgment('q2', 'B', 'ok', 'j1')], units, { copilot: 'A' });
    expect(items.responses).toEqual([{ queryId: 'q2', copilot: 'A' }]);
    expect(items.judgments).toEqual([{ queryId: 'q2', copilot: 'B', sample: 0, judge: 'j1' }]);
  });

  test('--kind judgment: only failed verdicts, their answers and turns kept', () => {
    const units = [{ queryId: 'q1', copilots: ['A'] }];
    const items = failedItems(responses, [judgment('q1', 'A', 'failed'), judgment('q2', 'B', 'ok')], units, { kind: 'judgment' });
    expect(items).toEqual({ responses: [], judgments: [{ queryId: 'q1', copilot: 'A', sample: 0, judge: '' }], turns: [] });
  });
});
