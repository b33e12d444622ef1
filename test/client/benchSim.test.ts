import { requestLogEntry, simSpanFigures } from '../../client/benchSim';
import type { SimRequestLog } from '../../sim/types';

const call = (at: number, answeredAt: number): SimRequestLog =>
  ({
    at,
    answeredAt,
    path: '/v1/chat/completions',
    model: 'judge',
    body: {},
    headers: {},
    workMs: 0.5,
  }) as SimRequestLog;

describe('simSpanFigures', () => {
  it('matches each arrival with the earliest freed slot and spreads the gaps, the long ones apart', () => {
    // Two slots of 100 ms calls: slot A's next calls come 2 ms and 3 ms after it frees, slot B's 30 ms and 4 ms after.
    const log = [
      call(0, 100),
      call(1, 101),
      call(102, 202), // A: 2 ms after 100
      call(131, 231), // B: 30 ms after 101
      call(205, 305), // A: 3 ms after 202
      call(235, 335), // B: 4 ms after 231
    ];
    const f = simSpanFigures(log, 100)!;
    expect(f.calls).toBe(6);
    expect(f.slotGapMs).toBeCloseTo((2 + 30 + 3 + 4) / 4, 10);
    expect(f.slotGaps).toEqual({ p50: 4, p90: 30, p99: 30, long: 1, longMs: 30 });
    expect(f.overheadMs.mean).toBe(0);
  });

  it('keeps what requests.json needs of a call: arrival, refusal and the answer’s end', () => {
    expect(requestLogEntry(call(5, 410))).toEqual([5, 0, 410]);
    expect(requestLogEntry({ ...call(7, 0), answeredAt: undefined, rateLimited: true })).toEqual([7, 1, null]);
  });
});
