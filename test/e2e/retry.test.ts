import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { planRetry } from '../../client/retry';
import { cliInProcess } from '../support/cliInProcess';
import { runInput } from '../../client/startRun';
import { benchmarkRun } from '../../workflows';
import { latticeGrid, runConfig, simCopilots, tempDir, withWorker } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';
import { simServersForFile } from '../support/sims';

/** Copilot Bolt refuses the queries in `broken` (HTTP 400: not retried, recorded as failed) until the test mends it. */
const broken = new Set(['t1-c1', 't2-c3']);
const queryIdOf = (body: any) =>
  latticeGrid(4, 5).find((q) => JSON.stringify(body.messages).includes(q.text as string))?.id as string;
const sim = simServersForFile({
  judge: { handler: scriptedLatticeJudge },
  copilots: {
    handler: (body) =>
      body.model === 'sim-terse' && broken.has(queryIdOf(body))
        ? { status: 400, body: JSON.stringify({ error: { message: 'bad day' } }) }
        : undefined,
  },
});

test('judgeflow retry --failed: the failed answers are asked again and judged, on the same run; nothing else is repeated', async () => {
  await withWorker('retry', async ({ client, taskQueue, store, storeFile }) => {
    const dir = tempDir('jf-retry-');
    const cfg = runConfig(dir, {
      protocol: 'lattice',
      queries: latticeGrid(4, 5),
      judge: { baseURL: sim.judge.url, model: 'judge-retry' },
      copilots: simCopilots(sim.copilots.url, { Ace: 'sim-thorough', Bolt: 'sim-terse' }),
    });
    const runId = `run-retry-${Date.now()}`;
    const first = await (
      await client.workflow.start(benchmarkRun, { taskQueue, workflowId: runId, args: [runInput(cfg, runId)] })
    ).result();
    // Why they failed: in report.json, report.md, report.html and `judgeflow status`, one line per kind with its count.
    const report = JSON.parse(fs.readFileSync(first.reportPath, 'utf8'));
    expect(report.failureReasons).toEqual([
      {
        kind: 'answer http',
        count: 2,
        message: expect.stringContaining('answered HTTP 400'),
        example: { queryId: expect.any(String), copilot: 'Bolt' },
      },
    ]);
    expect(fs.readFileSync(first.reportPath.replace('report.json', 'report.md'), 'utf8')).toMatch(
      /## Why items failed[\s\S]*\| answer http \| 2 \|/,
    );
    expect(fs.readFileSync(first.reportPath.replace('report.json', 'report.html'), 'utf8')).toContain(
      'id="failure-reasons"',
    );
    const status = await cliInProcess(['status', runId], { JUDGEFLOW_STORE: storeFile });
    expect(status.stdout).toMatch(
      /Why items failed:\n  2 × answer http \(e\.g\. t\d-c\d \/ Bolt\): copilot Bolt answered HTTP 400/,
    );
    const failed = (await store.responses(runId)).filter((r) => r.status === 'failed');
    expect(failed.map((r) => `${r.queryId}/${r.copilot}/${r.errorKind}`).sort()).toEqual([
      't1-c1/Bolt/http',
      't2-c3/Bolt/http',
    ]);
    const askedBefore = sim.copilots.requests.length;
    const judgedBefore = sim.judge.requests.length;

    // Nothing matches another copilot or kind: nothing is reopened.
    expect((await planRetry(store, runId, { copilot: 'Ace' })).reopened.responses).toEqual([]);
    expect((await planRetry(store, runId, { kind: 'timeout' })).reopened.responses).toEqual([]);
    await expect(planRetry(store, runId, { copilot: 'Nobody' })).rejects.toThrow(/has no copilot "Nobody"/);

    broken.clear();
    const plan = await planRetry(store, runId, { copilot: 'Bolt', kind: 'http' });
    expect(plan.reopened.responses).toHaveLength(2);
    expect((await store.getRun(runId))!.status).toBe('running');
    await expect(planRetry(store, runId, {})).rejects.toThrow(/still running/);
    await (
      await client.workflow.start(benchmarkRun, { taskQueue, workflowId: plan.workflowId, args: [plan.input] })
    ).result();

    expect((await store.getRun(runId))!.status).toBe('completed');
    expect((await store.responses(runId)).filter((r) => r.status !== 'ok')).toEqual([]);
    expect((await store.judgments(runId)).filter((j) => j.status === 'ok')).toHaveLength(40);
    // Exactly the two failed items were asked again, and only their answers judged.
    expect(
      sim.copilots.requests
        .slice(askedBefore)
        .map((r) => `${queryIdOf(r.body)}/${r.model}`)
        .sort(),
    ).toEqual(['t1-c1/sim-terse', 't2-c3/sim-terse']);
    // Only those two answers went to the judge, once each: the other copilot's verdicts on those queries stand.
    expect(
      sim.judge.requests
        .slice(judgedBefore)
        .map((r) => queryIdOf(r.body))
        .sort(),
    ).toEqual(['t1-c1', 't2-c3']);
  });
});

test('a copilot whose ${VAR} the worker lacks: a configuration failure, not the copilot’s; retry --failed --kind config redoes it once set', async () => {
  const server = http.createServer((req, res) => {
    req
      .resume()
      .on('end', () =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ answer: `answered with ${req.headers['x-api-key'] ? 'a key' : 'no key'}` })),
      );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ask`;
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.JF_RETRY_KEY;
  try {
    await withWorker(
      'retry-config',
      async ({ client, taskQueue, store }) => {
        const dir = tempDir('jf-retry-config-');
        const cfg = runConfig(dir, {
          protocol: 'lattice',
          queries: latticeGrid(1, 2),
          judge: { baseURL: sim.judge.url, model: 'judge-retry' },
          copilots: [
            {
              name: 'Keyed',
              type: 'http',
              url,
              headers: { 'X-Api-Key': '${JF_RETRY_KEY}' },
              body: { q: '{{query}}' },
              answerPath: 'answer',
            },
          ],
        });
        const runId = `run-retry-config-${Date.now()}`;
        await client.workflow.execute(benchmarkRun, { taskQueue, workflowId: runId, args: [runInput(cfg, runId)] });
        const failed = await store.responses(runId);
        expect(failed.map((r) => [r.status, r.errorKind])).toEqual([
          ['failed', 'config'],
          ['failed', 'config'],
        ]);
        expect(failed[0].errorMessage).toMatch(
          /references \$\{JF_RETRY_KEY\}, but the environment variable JF_RETRY_KEY is not set in this worker's environment/,
        );
        expect((await store.llmCalls(runId)).filter((c) => c.role === 'copilot')).toEqual([]); // nothing was asked or charged

        env.JF_RETRY_KEY = 'set-now-0123';
        const plan = await planRetry(store, runId, { kind: 'config' });
        expect(plan.reopened.responses).toHaveLength(2);
        await client.workflow.execute(benchmarkRun, { taskQueue, workflowId: plan.workflowId, args: [plan.input] });
        expect((await store.responses(runId)).map((r) => [r.status, r.text])).toEqual([
          ['ok', 'answered with a key'],
          ['ok', 'answered with a key'],
        ]);
      },
      env,
    );
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});
