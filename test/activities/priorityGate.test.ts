import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  ACTIVE_WITHIN_MS,
  forgetPriorityNotes,
  MAX_YIELD_MS,
  NOTE_EVERY_MS,
  yieldToHigherPriority,
} from '../../activities/priorityGate';
import { SqliteStore } from '../../stores/sqlite';

/**
 * Workers yield to a run of a higher priority: two workers (two connections to one results store), one making a CI
 * gate run's calls at priority 1, the other a sweep's at priority 5.
 */
describe('yieldToHigherPriority', () => {
  let dir: string;
  let gateWorker: SqliteStore;
  let sweepWorker: SqliteStore;
  const T0 = 1_700_000_000_000;

  /** A clock of its own: sleeping moves it on, and runs `during` (the other worker's calls) at each step. */
  function clock(during: (now: number) => Promise<void> = async () => {}) {
    const c = {
      t: T0,
      beats: 0,
      now: () => c.t,
      sleep: async (ms: number) => {
        c.t += ms;
        await during(c.t);
      },
      beat: () => void c.beats++,
    };
    return c;
  }

  beforeEach(() => {
    forgetPriorityNotes();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jf-priority-'));
    gateWorker = new SqliteStore(path.join(dir, 'results.db'));
    sweepWorker = new SqliteStore(path.join(dir, 'results.db'));
  });
  afterEach(async () => {
    await gateWorker.close();
    await sweepWorker.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('alone, or beside runs of the same or a lower priority, a run never waits', async () => {
    const c = clock();
    expect(await yieldToHigherPriority(sweepWorker, 'sweep', 5, c)).toBe(0);
    await gateWorker.notePriority('other-sweep', 5, T0, ACTIVE_WITHIN_MS);
    expect(await yieldToHigherPriority(sweepWorker, 'sweep', 5, c)).toBe(0);
    expect(await yieldToHigherPriority(gateWorker, 'slow', 4, c)).toBe(0); // beside two sweeps at 5
    expect(await yieldToHigherPriority(gateWorker, 'gate', 1, c)).toBe(0);
    expect(c.beats).toBe(0);
  });

  test('a sweep waits, heartbeating, while a gate run makes calls on another worker, and goes on once it stops', async () => {
    await gateWorker.notePriority('gate', 1, T0, ACTIVE_WITHIN_MS); // the gate run's last call, on the other worker
    const c = clock();
    const waited = await yieldToHigherPriority(sweepWorker, 'sweep', 5, c);
    // Still counted as making calls up to ACTIVE_WITHIN_MS after its last one; asked again every NOTE_EVERY_MS.
    expect(waited).toBe(Math.ceil((ACTIVE_WITHIN_MS + 1) / NOTE_EVERY_MS) * NOTE_EVERY_MS);
    expect(c.beats).toBe(waited / NOTE_EVERY_MS);
  });

  test('beside a gate run that keeps making calls, a sweep call waits at most MAX_YIELD_MS, then goes', async () => {
    const c = clock((now) => gateWorker.notePriority('gate', 1, now, ACTIVE_WITHIN_MS).then(() => undefined));
    await gateWorker.notePriority('gate', 1, T0, ACTIVE_WITHIN_MS);
    expect(await yieldToHigherPriority(sweepWorker, 'sweep', 3, c)).toBe(MAX_YIELD_MS);
  });

  test("a run's calls after its first on a worker do not wait for the store: the answer is refreshed behind them", async () => {
    let asked = 0;
    const slow = {
      notePriority: () => (++asked === 1 ? Promise.resolve(3) : new Promise<number>(() => {})), // then never answers
    };
    const c = clock();
    expect(await yieldToHigherPriority(slow, 'run', 3, c)).toBe(0);
    c.t += NOTE_EVERY_MS;
    expect(await yieldToHigherPriority(slow, 'run', 3, c)).toBe(0); // asked again, answered from what it had
    expect(await yieldToHigherPriority(slow, 'run', 3, c)).toBe(0);
    expect(asked).toBe(2);
  });

  test('a store that cannot answer holds nothing back', async () => {
    const broken = { notePriority: () => Promise.reject(new Error('connection refused')) };
    expect(await yieldToHigherPriority(broken, 'sweep', 5, clock())).toBe(0);
  });
});
