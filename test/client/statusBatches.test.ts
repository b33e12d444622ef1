import { batchLines } from '../../client/commands/status';
import type { BatchProgress } from '../../contract/run';

const batch = (key: string, ended: boolean, succeeded: number): BatchProgress => ({
  key,
  batchId: `batch_${key}`,
  lines: 10,
  state: ended ? 'completed' : 'in_progress',
  ended,
  counts: { total: 10, succeeded, failed: 0, pending: 10 - succeeded },
});

test('a batch round still open at the provider is shown with its batches', () => {
  expect(batchLines({ judge: { round: 2, batches: [batch('a', false, 3), batch('b', true, 10)], live: 1 } })).toEqual([
    'Batch API judging by the judge: batch round 2, 1 item(s) waiting to be asked live',
    '  batch_a: in_progress, 3/10 done',
    '  batch_b: completed, 10/10 done',
  ]);
});

test('once every batch has ended (a complete run, as its result carries them) no round is shown as open', () => {
  const lines = batchLines({
    judge: { round: 2, batches: [batch('a', true, 10)], live: 0 },
    j2: { round: 0, batches: [], live: 0 },
  });
  expect(lines).toEqual([
    'Batch API judging by the judge: 2 batch round(s) finished, none open',
    'Batch API judging by judge j2: 0 batch round(s) finished, none open',
  ]);
});
