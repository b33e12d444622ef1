import { benchmarkRun } from '../../workflows';
import { runInput } from '../../client/startRun';
import { startSimServer, type SimServer } from '../../sim/server';
import { latticeGrid, runConfig, tempDir, withWorker } from '../support/harness';
import { gradedText, scriptedLatticeJudge } from '../support/judges';
import { scheduledActivities } from '../support/histories';

/**
 * Calls batched into one activity when only concurrency limits an endpoint (activities/itemGroup.ts): every item is still
 * asked once, and a fault inside a batch costs only that item — the rest of the batch is asked one by one.
 */
let judge: SimServer;
let copilots: SimServer;
const refusedOnce = new Set<string>();
beforeAll(async () => {
  judge = await startSimServer({
    latencyMs: 30,
    handler: (body) => {
      const user = String(body.messages.find((m: any) => m.role === 'user')?.content ?? '');
      // One answer the judge always rejects (HTTP 400: not retried), one it throttles the first time it sees it.
      if (user.includes('task 4 in category 2') && gradedText(body).includes('Surfboard-marker'))
        return { status: 400, content: 'unreadable (simulated)' };
      // (A throttle makes the judge paced for the rest of the run, one call per activity: so it comes after the 400.)
      if (
        user.includes('task 7 in category 1') &&
        !gradedText(body).includes('Surfboard-marker') &&
        !refusedOnce.has(user)
      ) {
        refusedOnce.add(user);
        return { status: 429, headers: { 'Retry-After': '0' }, content: 'Rate limit reached (simulated).' };
      }
      return scriptedLatticeJudge(body, { requestIndex: 0, log: () => undefined } as never);
    },
  });
  copilots = await startSimServer({
    latencyMs: 5,
    handler: (body) => {
      if (body.response_format) return undefined;
      const user = String(body.messages[body.messages.length - 1]?.content ?? '');
      // Surfboard marks its answers, so the judge can pick one of them out.
      return body.model === 'sim-terse' ? `Surfboard-marker: a short answer to "${user.slice(0, 40)}".` : undefined;
    },
  });
});
afterAll(async () => {
  await Promise.all([judge, copilots].map((s) => s.close()));
});

test('batched calls: each item asked once; a rejected and a throttled judge call inside batches cost only themselves', async () => {
  const dir = tempDir();
  const queries = latticeGrid(8, 5); // 40 queries × 2 copilots
  const cfg = runConfig(dir, {
    protocol: 'lattice',
    queries,
    // The judge is the slow endpoint, so a backlog of answers waits for it and its calls go in batches.
    judge: { baseURL: judge.url, model: 'judge-model-x', concurrency: 2 },
    copilots: [
      { name: 'Sorin', type: 'openai', baseURL: copilots.url, model: 'sim-thorough', concurrency: 4 },
      { name: 'Surfboard', type: 'openai', baseURL: copilots.url, model: 'sim-terse', concurrency: 4 },
    ],
  });
  await withWorker('batches', async ({ client, taskQueue, store }) => {
    const runId = 'run-batches-' + Date.now();
    const judgeBefore = judge.requests.length;
    const copilotBefore = copilots.requests.length;
    const result = await client.workflow.execute(benchmarkRun, {
      taskQueue,
      workflowId: runId,
      args: [runInput(cfg, runId)],
    });

    // Batches were used, for both copilots and the judge.
    const activities = await scheduledActivities(client, runId);
    expect(activities.some((a) => a.name === 'askCopilotBatch' && a.items.length > 1)).toBe(true);
    expect(activities.some((a) => a.name === 'judgeItems' && a.items.length > 1)).toBe(true);

    // Every answer asked for exactly once, at the activity level and at the copilot.
    expect(copilots.requests.length - copilotBefore).toBe(80);
    const judgeCalls = judge.requests.slice(judgeBefore);
    const callsPer = new Map<string, number>();
    // A judge request's user message holds the question and the graded answer: one per query and copilot.
    const userOf = (body: any) => String(body.messages.find((m: any) => m.role === 'user')?.content ?? '');
    for (const r of judgeCalls) callsPer.set(userOf(r.body), (callsPer.get(userOf(r.body)) ?? 0) + 1);
    const rejected = [...callsPer.keys()].filter(
      (t) => t.includes('Surfboard-marker') && t.includes('task 4 in category 2'),
    );
    const throttled = [...callsPer.keys()].filter(
      (t) => !t.includes('Surfboard-marker') && t.includes('task 7 in category 1'),
    );
    expect(rejected).toHaveLength(1);
    expect(throttled).toHaveLength(1);
    // The rejected answer: once in its batch, once alone (a 400 is not retried); the throttled one: refused, then judged.
    // Whether the rejected item lands in a batch depends on the judge's backlog when it is planned (since the pause
    // check before each further item, it sometimes does not): asked alone first, it costs one call, itself.
    const rejectedCarriers = carriersOf(activities, await store.judgeUnits(runId), 't4-c2', 'Surfboard');
    const rejectedInBatch = rejectedCarriers[0]?.startsWith('judgeItems×') ?? false;
    expect(callsPer.get(rejected[0])).toBe(rejectedInBatch ? 2 : 1);
    expect(callsPer.get(throttled[0])).toBe(2);
    for (const [text, n] of callsPer) if (!rejected.includes(text) && !throttled.includes(text)) expect(n).toBe(1);
    expect(callsPer.size).toBe(80);

    // Both faults happened inside batches, and those items were then asked alone.
    const units = await store.judgeUnits(runId);
    const itemOf = (queryId: string, copilot: string) =>
      `judge#${units.findIndex((u) => u.queryId === queryId && u.copilots[0] === copilot)}`;
    const carriers = (item: string) =>
      activities.filter((a) => a.items.includes(item)).map((a) => `${a.name}×${a.items.length}`);
    // A judge batch of 2 to 50 (filledBatchSize, workflows/limits/itemGroupSize.ts): how many depends on the backlog and
    // the other places' work when it starts.
    const batch = expect.stringMatching(/^judgeItems×([2-9]|[1-4][0-9]|50)$/);
    expect(carriers(itemOf('t4-c2', 'Surfboard'))).toEqual(
      rejectedInBatch ? [batch, 'judgeItem×1', 'recordJudgeFailure×1'] : ['judgeItem×1', 'recordJudgeFailure×1'],
    );
    expect(carriers(itemOf('t7-c1', 'Sorin'))).toEqual([batch, 'judgeItem×1']);

    // Nothing lost: 79 judgments, one recorded failure with the judge's reason; the progress counts agree.
    const judgments = await store.judgments(runId);
    expect(judgments.filter((j) => j.status === 'ok')).toHaveLength(79);
    const failed = judgments.filter((j) => j.status === 'failed');
    expect(failed.map((j) => `${j.queryId}/${j.copilot}`)).toEqual(['t4-c2/Surfboard']);
    expect(failed[0].error).toMatch(/400|unreadable/);
    expect(result.progress.stages).toEqual({
      collect: { done: 80, total: 80, failures: 0 },
      judge: { done: 80, total: 80, failures: 1 },
    });
  });
}, 120_000);

/** The activities that carried one query/copilot's judge item, as `name×items`. */
function carriersOf(
  activities: Array<{ name: string; items: string[] }>,
  units: Array<{ queryId: string; copilots: string[] }>,
  queryId: string,
  copilot: string,
): string[] {
  const item = `judge#${units.findIndex((u) => u.queryId === queryId && u.copilots[0] === copilot)}`;
  return activities.filter((a) => a.items.includes(item)).map((a) => `${a.name}×${a.items.length}`);
}
