import { failedItems } from '../../../core/model/retryFailed';
import type { StoredJudgment, StoredResponse } from '../../../core/model/types';

const response = (
  queryId: string,
  copilot: string,
  status: StoredResponse['status'],
  errorKind: string | null = null,
) => ({ queryId, copilot, status, errorKind }) as StoredResponse;
const judgment = (queryId: string, copilot: string, status: StoredJudgment['status'], judgeName = '') =>
  ({ queryId, copilot, status, sample: 0, judgeName }) as StoredJudgment;

describe('failedItems (judgeflow retry --failed)', () => {
  const responses = [
    response('q1', 'A', 'ok'),
    response('q1', 'B', 'failed', 'network'),
    response('q2', 'A', 'failed', 'config'),
    response('q2', 'B', 'ok'),
  ];

  test('a failed answer in a unit shown with others (CAB): the whole unit is judged again, its turns dropped', () => {
    const units = [
      { queryId: 'q1', copilots: ['A', 'B'] },
      { queryId: 'q2', copilots: ['B'] },
    ];
    const judgments = [judgment('q1', 'A', 'ok'), judgment('q1', 'B', 'failed'), judgment('q2', 'B', 'ok')];
    const items = failedItems(responses, judgments, units, { kind: 'network' });
    expect(items.responses).toEqual([{ queryId: 'q1', copilot: 'B' }]);
    expect(items.judgments).toEqual([
      { queryId: 'q1', copilot: 'A', sample: 0, judge: '' },
      { queryId: 'q1', copilot: 'B', sample: 0, judge: '' },
    ]);
    expect(items.turns).toEqual([{ queryId: 'q1', sample: 0, judge: '' }]);
  });

  test('a failed answer no unit showed: judged together (CAB), the query’s units are judged again with the new answer; judged alone (LATTICE), the other verdicts stand', () => {
    const together = [
      { queryId: 'q1', copilots: ['A', 'B'], judge: 'j1' },
      { queryId: 'q2', copilots: ['B'], judge: 'j1' },
    ];
    const cab = failedItems(responses, [judgment('q2', 'B', 'ok', 'j1')], together, { copilot: 'A' });
    expect(cab.responses).toEqual([{ queryId: 'q2', copilot: 'A' }]);
    expect(cab.judgments).toEqual([{ queryId: 'q2', copilot: 'B', sample: 0, judge: 'j1' }]);
    const alone = [
      { queryId: 'q1', copilots: ['A'], judge: 'j1' },
      { queryId: 'q2', copilots: ['B'], judge: 'j1' },
    ];
    const lattice = failedItems(responses, [judgment('q2', 'B', 'ok', 'j1')], alone, { copilot: 'A' });
    expect(lattice.responses).toEqual([{ queryId: 'q2', copilot: 'A' }]);
    expect(lattice.judgments).toEqual([]);
  });

  test('--kind judgment: only failed verdicts, their answers and turns kept', () => {
    const units = [{ queryId: 'q1', copilots: ['A'] }];
    const items = failedItems(responses, [judgment('q1', 'A', 'failed'), judgment('q2', 'B', 'ok')], units, {
      kind: 'judgment',
    });
    expect(items).toEqual({
      responses: [],
      judgments: [{ queryId: 'q1', copilot: 'A', sample: 0, judge: '' }],
      turns: [],
    });
  });
});
