import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { untilSendTime } from '../../activities/heartbeat';
import { SqliteStore } from '../../stores/sqlite';

/**
 * Paced sends shared by a run's workers: two workers (two connections to one results store) that pick up late calls to
 * one endpoint at the same moment send them a spacing apart, not side by side (which a sliding-window limit refuses).
 */
describe('untilSendTime across workers', () => {
  let dir: string;
  let workers: SqliteStore[];
  const T0 = 1_700_000_000_000;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jf-send-slots-'));
    const file = path.join(dir, 'results.db');
    workers = [new SqliteStore(file), new SqliteStore(file)];
    jest.useFakeTimers({ now: T0 });
  });
  afterEach(async () => {
    jest.useRealTimers();
    for (const w of workers) await w.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Each call's send time (when untilSendTime let it go), in the order the calls were made. */
  async function sendTimes(calls: Array<{ worker: number; at: number; spacingMs?: number; endpoint?: string }>) {
    return (await sends(calls)).map((s) => s.at);
  }

  /** …and what each tells the workflow's limiter (how late it left). */
  async function sends(calls: Array<{ worker: number; at: number; spacingMs?: number; endpoint?: string }>) {
    const sent: Array<{ at: number; sentLateMs?: number }> = new Array(calls.length);
    const done = calls.map((c, i) =>
      untilSendTime(workers[c.worker], 'run-1', {
        at: c.at,
        spacingMs: c.spacingMs,
        endpoint: c.endpoint ?? 'judge',
      }).then((told) => (sent[i] = { at: Date.now(), ...told })),
    );
    await jest.advanceTimersByTimeAsync(10_000);
    await Promise.all(done);
    return sent;
  }

  test('late calls picked up by two workers at once leave one spacing apart, in turn across the workers', async () => {
    // Eight calls the limiter meant for T0 - 500 … T0 - 325 (25 ms apart), all picked up late, at T0.
    const sent = await sendTimes(
      Array.from({ length: 8 }, (_, i) => ({ worker: i % 2, at: T0 - 500 + 25 * i, spacingMs: 25 })),
    );
    expect([...sent].sort((a, b) => a - b)).toEqual(Array.from({ length: 8 }, (_, i) => T0 + 25 * i));
    // Each worker's own calls are spaced by two slots: the other worker's calls sit between them.
    const own = sent.filter((_, i) => i % 2 === 0).sort((a, b) => a - b);
    expect(own.slice(1).map((t, i) => t - own[i])).toEqual([50, 50, 50]);
  });

  test('a call on time keeps the limiter’s time; another endpoint is spaced on its own', async () => {
    const sent = await sendTimes([
      { worker: 0, at: T0 + 400, spacingMs: 25 },
      { worker: 1, at: T0 + 410, spacingMs: 25 }, // inside the first one's spacing: moved to T0 + 425
      { worker: 1, at: T0 + 400, spacingMs: 25, endpoint: 'copilot:Ace' },
      { worker: 0, at: T0 + 300 }, // unspaced (a requests-per-minute cap alone): its own time, no slot claimed
    ]);
    expect(sent).toEqual([T0 + 400, T0 + 425, T0 + 400, T0 + 300]);
  });

  test('a call that leaves after the limiter’s time says how late (picked up late, or its slot moved on by another send), one on time says nothing', async () => {
    const told = await sends([
      { worker: 0, at: T0 + 400, spacingMs: 25 }, // on time
      { worker: 1, at: T0 + 410, spacingMs: 25 }, // the slot moved on to T0 + 425
      { worker: 0, at: T0 - 300, spacingMs: 25, endpoint: 'copilot:Ace' }, // picked up 300 ms after its time
      { worker: 1, at: T0 + 100 }, // unspaced, on time
    ]);
    expect(told).toEqual([
      { at: T0 + 400 },
      { at: T0 + 425, sentLateMs: 15 },
      { at: T0, sentLateMs: 300 },
      { at: T0 + 100 },
    ]);
    // No send time (an unpaced call): nothing to tell.
    expect(await untilSendTime(workers[0], 'run-1', undefined)).toEqual({});
  });

  test('a slot far ahead (a clock that differs between machines) parks a call at most 5 s', async () => {
    const sent = await sendTimes([
      { worker: 0, at: T0 + 60_000, spacingMs: 25 },
      { worker: 1, at: T0, spacingMs: 25 },
    ]);
    expect(sent).toEqual([T0 + 5_000, T0 + 5_000]);
  });
});
