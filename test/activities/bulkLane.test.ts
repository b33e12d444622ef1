import { BulkLane } from '../../activities/bulkLane';

/**
 * The lane on a clock the test moves: each unit of bulk work takes 1 ms of it, a slice is 5 ms. What is asserted is
 * order, not time: whose units run in which turn of the event loop.
 */
function laneWithClock(sliceMs = 5) {
  let now = 0;
  const lane = new BulkLane(sliceMs, () => now);
  return { lane, advance: (ms: number) => (now += ms) };
}

/** Counts turns of the event loop (a setImmediate that re-arms itself) until stopped. */
function turnCounter() {
  let turn = 0;
  let running = true;
  const tick = () => {
    turn++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    get turn() {
      return turn;
    },
    stop: () => void (running = false),
  };
}

test('bulk works take turns a slice at a time, each slice on a turn of the event loop of its own', async () => {
  const { lane, advance } = laneWithClock();
  const turns = turnCounter();
  const log: Array<{ who: string; turn: number }> = [];
  const work = (who: string, units: number) =>
    lane.run(async (pause) => {
      for (let i = 0; i < units; i++) {
        log.push({ who, turn: turns.turn });
        advance(1);
        await pause();
      }
    });
  await Promise.all([work('A', 12), work('B', 12), work('C', 7)]);
  turns.stop();
  // Runs of one work's units: five to a slice (the last of each work shorter), round robin A, B, C.
  const runs: Array<{ who: string; units: number; turns: Set<number> }> = [];
  for (const entry of log) {
    const last = runs[runs.length - 1];
    if (last?.who === entry.who) {
      last.units++;
      last.turns.add(entry.turn);
    } else runs.push({ who: entry.who, units: 1, turns: new Set([entry.turn]) });
  }
  expect(runs.map((r) => `${r.who}${r.units}`)).toEqual(['A5', 'B5', 'C5', 'A5', 'B5', 'C2', 'A2', 'B2']);
  // A slice runs within one turn; no two slices share a turn, so whatever else waits gets in between.
  for (const r of runs) expect(r.turns.size).toBe(1);
  const sliceTurns = runs.map((r) => [...r.turns][0]);
  expect(new Set(sliceTurns).size).toBe(sliceTurns.length);
});

test('an I/O callback that arrives during bulk work runs before the next slice, not after all of them', async () => {
  const { lane, advance } = laneWithClock();
  const log: string[] = [];
  const work = (who: string) =>
    lane.run(async (pause) => {
      for (let i = 0; i < 20; i++) {
        if (who === 'A' && i === 2) setImmediate(() => log.push('other work')); // e.g. a judge call's socket event
        log.push(who);
        advance(1);
        await pause();
      }
    });
  await Promise.all([work('A'), work('B'), work('C'), work('D')]);
  // The callback came during A's first slice and ran right after it: before B's first unit.
  expect(log.indexOf('other work')).toBe(5);
});

test('a bulk work that throws lets the lane go: the others finish', async () => {
  const { lane, advance } = laneWithClock();
  const failing = lane.run(async (pause) => {
    advance(6);
    await pause();
    throw new Error('file unreadable');
  });
  const done: string[] = [];
  const other = lane.run(async (pause) => {
    for (let i = 0; i < 10; i++) {
      advance(1);
      await pause();
    }
    done.push('other');
  });
  await expect(failing).rejects.toThrow('file unreadable');
  await other;
  expect(done).toEqual(['other']);
});

test('a wait on I/O (a batch stored in PostgreSQL) is made without the lane: the other bulk work runs meanwhile', async () => {
  const { lane, advance } = laneWithClock();
  const log: string[] = [];
  let release!: () => void;
  const io = new Promise<void>((resolve) => (release = resolve));
  const a = lane.run(async (_pause, away) => {
    log.push('A starts');
    advance(1);
    await away(async () => {
      log.push('A waits');
      await io;
    });
    log.push('A resumes');
  });
  const b = lane.run(async (pause) => {
    for (let i = 0; i < 3; i++) {
      log.push('B');
      advance(1);
      await pause();
    }
    release(); // the store answers A once B has run: A held the lane while it waited, B would never have
  });
  await Promise.all([a, b]);
  expect(log).toEqual(['A starts', 'A waits', 'B', 'B', 'B', 'A resumes']);
});
