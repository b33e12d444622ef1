import { proxyActivities } from '@temporalio/workflow';
import type { ItemGroupResult } from '../../../activities/itemGroup';
import { EndpointLane, type ItemOutcome, type LaneCalls } from '../../../workflows/endpointLane';
import { JudgePlanner, judgeWorkFrom } from '../../../workflows/judgePlanner';
import { Limiter } from '../../../workflows/limits/limiter';
import type { CallOutcome, StageCounts } from '../../../contract/run';

/** Small workflows around one endpoint lane and the judge planner, with mocked activities (test/workflows/*.test.ts). */

export type Status = 'ok' | 'failed' | 'throttled';
export interface ItemResult {
  key: string;
  status: Status;
  outcome: CallOutcome;
}

export interface LaneActivities {
  callOne(input: { key: string; attempt: number }): Promise<ItemResult>;
  callMany(input: { keys: string[] }): Promise<ItemGroupResult<Omit<ItemResult, 'outcome'>>>;
  recordFailure(input: { key: string; reason: string }): Promise<void>;
  planReady(input: { queryIds: string[] }): Promise<number>;
}

const mocked = proxyActivities<LaneActivities>({ startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 1 } });

function calls(counted: Array<[string, ItemOutcome]>): LaneCalls<string, ItemResult> {
  return {
    one: (key, attempt) => mocked.callOne({ key, attempt }),
    many: (keys) => mocked.callMany({ keys }),
    throttled: (r) => r.status === 'throttled',
    outcome: (r) => (r.status === 'ok' ? 'done' : 'failed'),
    recordFailure: (key, error) =>
      mocked.recordFailure({ key, reason: error instanceof Error ? error.message : String(error) }),
    counted: (key, outcome) => void counted.push([key, outcome]),
  };
}

/** Every key through one lane of `concurrency` places; what was counted, in order. */
export async function laneWorkflow(args: {
  keys: string[];
  concurrency: number;
  /** Batches filled to end with the other places' (a judge's lane) instead of the share rule (a copilot's). */
  fillBatches?: boolean;
}): Promise<{ counts: StageCounts; counted: Array<[string, ItemOutcome]> }> {
  const counts = { done: 0, total: args.keys.length, failures: 0 };
  const counted: Array<[string, ItemOutcome]> = [];
  const lane = new EndpointLane(
    'test',
    new Limiter({ concurrency: args.concurrency }),
    calls(counted),
    counts,
    undefined,
    undefined,
    args.fillBatches,
  );
  let next = 0;
  const source = {
    available: () => args.keys.length - next,
    take: (n: number) => {
      const taken = args.keys.slice(next, next + n);
      next += taken.length;
      return taken;
    },
    closed: () => true,
  };
  await lane.drain(source, () => false);
  return { counts, counted };
}

/**
 * Answers arrive in waves (`waves[k]` query ids), one mocked call apart (the server's timers are too coarse to space them); the planner plans them for a panel of judges with the
 * given concurrencies, and each judge's lane judges its items (ids `item:<index>` for the mocked callOne).
 */
export async function plannerWorkflow(args: {
  waves: string[][];
  concurrencies: number[];
}): Promise<{ judged: Array<[number, number]>; counts: StageCounts }> {
  const counts = { done: 0, total: 0, failures: 0 };
  const work = judgeWorkFrom(args.concurrencies.length);
  const planner = new JudgePlanner(work, args.concurrencies, (queryIds) => mocked.planReady({ queryIds }), counts);
  let collecting = true;
  const judged: Array<[number, number]> = [];
  const lanes = args.concurrencies.map(async (concurrency, lane) => {
    const itemCalls = calls([]);
    const judge = new EndpointLane(
      `judge:${lane}`,
      new Limiter({ concurrency }),
      {
        ...itemCalls,
        one: (index: number, attempt) => mocked.callOne({ key: `item:${index}`, attempt }),
        many: (indices: number[]) => mocked.callMany({ keys: indices.map((i) => `item:${i}`) }),
        counted: (index: number) => void judged.push([lane, index]),
        recordFailure: async () => undefined,
      },
      counts,
    );
    await judge.drain(planner.source(lane), () => false);
  });
  const arrivals = (async () => {
    for (const wave of args.waves) {
      wave.forEach((q) => planner.answered(q));
      await mocked.callOne({ key: 'arrival', attempt: 1 });
    }
    collecting = false;
  })();
  await Promise.all([arrivals, planner.run(() => collecting), ...lanes]);
  return { judged, counts };
}
