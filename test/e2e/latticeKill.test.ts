import path from 'node:path';
import { runInput } from '../../client/startRun';
import type { StoredJudgment } from '../../core/model/types';
import { startSimServer, type SimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import { killableWorker } from '../support/cli';
import { latticeGrid, runConfig, settled, simCopilots, tempDir, uniqueQueue, until } from '../support/harness';
import { gradedText, scriptedLatticeJudge } from '../support/judges';

jest.setTimeout(180_000);

const CONCURRENCY = 3;

/**
 * A LATTICE run on a worker process killed with SIGKILL once `killAfter` judgments are stored, then restarted.
 * A slow judge so that the kill lands while judgments are in flight.
 */
async function killMidJudging(args: {
  queries: number;
  copilots: Record<string, string>;
  judging?: (judgeUrl: string) => Record<string, unknown>;
  killAfter: number;
}) {
  const judge = await startSimServer({ handler: scriptedLatticeJudge, latencyMs: 120 });
  const copilots = await startSimServer({});
  const dir = tempDir();
  const home = path.join(dir, 'home');
  const config = runConfig(dir, {
    protocol: 'lattice',
    queries: latticeGrid(args.queries / 5, 5),
    ...(args.judging?.(judge.url) ?? { judge: { baseURL: judge.url, model: 'judge', concurrency: CONCURRENCY } }),
    copilots: simCopilots(copilots.url, args.copilots),
  });
  const world = await killableWorker(home, uniqueQueue('kill'));
  const { env, client, store } = world;
  try {
    const runId = 'run-kill-' + Date.now();
    const handle = await client.workflow.start(benchmarkRun, {
      taskQueue: env.JUDGEFLOW_TASK_QUEUE,
      workflowId: runId,
      args: [runInput(config, runId)],
    });
    const judged = async () => (await store.judgments(runId)).length;
    await until(async () => (await judged()) >= args.killAfter, 90_000);
    await world.kill();
    const atKill = await judged();
    // What the killed worker sent before it died, counted once it has all arrived.
    const requestsAtKill = await settled(() => judge.requests.length);
    world.restart();
    const result = await handle.result();
    return {
      result,
      atKill,
      requestsAtKill,
      requests: [...judge.requests],
      judgments: await store.judgments(runId),
      responses: await store.responses(runId),
    };
  } finally {
    await world.close();
    await judge.close();
    await copilots.close();
  }
}

/** Finished judgments were not paid for twice: only those in flight at the kill (≤ judge concurrency) were re-asked. */
function expectOnlyInFlightRepeated(
  run: { atKill: number; requestsAtKill: number; requests: SimServer['requests'] },
  expected: number,
) {
  expect(run.atKill).toBeLessThan(expected);
  expect(run.requests.length).toBeLessThanOrEqual(expected + CONCURRENCY);
  // After the restart only the judgments still missing (plus those in flight at the kill) were asked for.
  expect(run.requests.length - run.requestsAtKill).toBeLessThanOrEqual(expected - run.atKill + CONCURRENCY);
}

test('a worker killed with SIGKILL mid-judging: the run completes with exactly one judgment per response, none lost', async () => {
  // 40 queries × 2 copilots = 80 judgments
  const run = await killMidJudging({ queries: 40, copilots: { A: 'sim-thorough', B: 'sim-terse' }, killAfter: 20 });
  expect(run.judgments).toHaveLength(80);
  expect(new Set(run.judgments.map((j) => `${j.queryId}/${j.copilot}`)).size).toBe(80);
  expect(run.judgments.every((j) => j.status === 'ok')).toBe(true);
  expect(run.result.progress).toMatchObject({ stage: 'done', done: 80, total: 80, failures: 0 });
  expectOnlyInFlightRepeated(run, 80);
  expect(run.responses).toHaveLength(80);
});

test('killed mid-judging with a panel of two judges and 2 samples each: every verdict stored once, no judge call repeated beyond those in flight', async () => {
  const expected = 20 * 2 * 2 * 2; // 20 queries × 2 copilots × 2 samples × 2 judges
  const run = await killMidJudging({
    queries: 20,
    copilots: { A: 'sim-thorough', B: 'sim-copilot' },
    judging: (url) => ({
      judges: [
        { name: 'first', baseURL: url, model: 'judge-1', concurrency: 1 },
        { name: 'second', baseURL: url, model: 'judge-2', concurrency: CONCURRENCY - 1 },
      ],
      panel: { samples: 2 },
    }),
    killAfter: 50,
  });
  const key = (j: StoredJudgment) => `${j.queryId}/${j.copilot}/${j.judgeName}/${j.sample}`;
  expect(run.judgments).toHaveLength(expected);
  expect(new Set(run.judgments.map(key)).size).toBe(expected);
  expect(new Set(run.judgments.map((j) => `${j.judgeName}/${j.sample}`))).toEqual(
    new Set(['first/0', 'first/1', 'second/0', 'second/1']),
  );
  expect(run.judgments.every((j) => j.status === 'ok')).toBe(true);
  // The two judges together have CONCURRENCY calls in flight at most.
  expectOnlyInFlightRepeated(run, expected);
  // Each judge asked about each response twice (a sample each), plus at most one repeat of each sample for a call in
  // flight at the kill: the second judge's places may hold both samples of one response at once.
  const perJudgeText = new Map<string, number>();
  for (const r of run.requests)
    perJudgeText.set(
      `${r.model}|${gradedText(r.body)}`,
      (perJudgeText.get(`${r.model}|${gradedText(r.body)}`) ?? 0) + 1,
    );
  expect(perJudgeText.size).toBe(80);
  expect([...perJudgeText.values()].every((n) => n >= 2 && n <= 4)).toBe(true);
});
