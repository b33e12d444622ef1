import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import YAML from 'yaml';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, tempDir, until, withWorker, writeQueries } from '../support/harness';
import { simServersForFile } from '../support/sims';
import { startSimServer } from '../../sim/server';

/** The sim's own judge, deterministic; part-way through the test it starts marking the terse copilot's answers down. */
const TERSE_MARK = 'over the next few weeks';
const sim = simServersForFile({ judge: {}, copilots: {} });

interface Received {
  body: any;
  headers: Record<string, unknown>;
}

/** The alert receiver: a local HTTP server that keeps every POST. */
async function alertReceiver(): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ body: JSON.parse(Buffer.concat(chunks).toString('utf8')), headers: req.headers });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, server };
}

test('a 15-second schedule of a fixed query set: ≥ 3 runs in the trend, and an alert naming only the copilot the judge started marking down', async () => {
  const receiver = await alertReceiver();
  try {
    await withWorker('schedule-alert', async ({ taskQueue, storeFile, store }) => {
      const env = { JUDGEFLOW_STORE: storeFile, JUDGEFLOW_TASK_QUEUE: taskQueue };
      const dir = tempDir();
      const queries = writeQueries(dir, latticeGrid(2, 5));
      const configFile = path.join(dir, 'nightly.yaml');
      fs.writeFileSync(
        configFile,
        YAML.stringify({
          protocol: 'lattice',
          judge: { baseURL: sim.judge.url, model: 'judge-live', concurrency: 6, samples: 2 },
          copilots: [
            { name: 'Sorin', type: 'openai', baseURL: sim.copilots.url, model: 'sim-thorough' },
            { name: 'Surfboard', type: 'openai', baseURL: sim.copilots.url, model: 'sim-terse' },
          ],
          output: 'runs',
        }),
      );
      const name = `nightly-${Date.now()}`;
      const base = [
        'schedule',
        'create',
        name,
        '--every',
        '15s',
        '--refresh',
        'none',
        '--queries',
        queries,
        '--collect-again',
        '--then-run',
        configFile,
      ];
      const missing = await cliInProcess(
        ['schedule', 'create', name, '--every', '15s', '--refresh', 'none', '--then-run', configFile],
        env,
      );
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('--snapshot ID');
      expect((await cliInProcess([...base, '--alert-url', 'ftp://x'], env)).stderr).toContain(
        'expected an http:// or https:// URL',
      );
      expect(
        (await cliInProcess([...base, '--alert-url', receiver.url, '--alert-url-env', 'HOOK'], env)).stderr,
      ).toContain('not both');
      expect((await cliInProcess([...base, '--alert-url-env', 'not a name'], env)).stderr).toContain(
        'expected an environment variable name',
      );

      // The first firing is one interval after a moment inside the create command, which takes seconds under load.
      const creating = Date.now();
      const created = await cliInProcess([...base, '--alert-url', receiver.url], env);
      const createdAt = Date.now();
      expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });

      // describe: config path, judge and copilots, the next five firings (the first one interval after creation).
      const d = JSON.parse((await cliInProcess(['schedule', 'describe', name, '--json'], env)).stdout);
      expect(d).toMatchObject({
        refresh: 'none',
        config: configFile,
        judge: { model: 'judge-live', baseURL: sim.judge.url },
        alert: { on: 'regression' },
      });
      expect(d.copilots).toEqual([
        { name: 'Sorin', type: 'openai', model: 'sim-thorough' },
        { name: 'Surfboard', type: 'openai', model: 'sim-terse' },
      ]);
      expect(d.next).toHaveLength(5);
      const firsts = d.next.map((t: string) => new Date(t).getTime());
      expect(firsts[0] - creating).toBeGreaterThan(13_000);
      expect(firsts[0] - createdAt).toBeLessThan(17_000);
      expect(firsts[1] - firsts[0]).toBe(15_000);
      const text = (await cliInProcess(['schedule', 'describe', name], env)).stdout;
      expect(text).toContain(`config: ${configFile}`);
      expect(text).toContain(`judge: judge-live at ${sim.judge.url}`);
      expect(text).toContain('copilots: Sorin (openai sim-thorough), Surfboard (openai sim-terse)');
      expect(text).toContain('refresh: none (snapshot snap-');

      // Run 1 now, run 2 at the first firing; then the judge turns harsh on the terse copilot for the runs after.
      expect((await cliInProcess(['schedule', 'trigger', name], env)).code).toBe(0);
      const completed = async () =>
        (
          await Promise.all(
            (await store.scheduleSnapshots(name)).map(async (r) =>
              r.runId ? (await store.getRun(r.runId))?.status : undefined,
            ),
          )
        ).filter((s) => s === 'completed').length;
      await until(async () => (await completed()) >= 2, 40_000);
      sim.judge.setJudgeProfile('judge-live', { favour: { contains: TERSE_MARK, bonus: -2 } });
      await until(() => receiver.received.length > 0, 40_000);
      await until(async () => (await completed()) >= 3, 20_000);
      expect((await cliInProcess(['schedule', 'pause', name], env)).code).toBe(0);

      const trend = JSON.parse((await cliInProcess(['trend', '--schedule', name, '--json'], env)).stdout);
      expect(trend.runs.length).toBeGreaterThanOrEqual(3);
      const started = trend.runs.map((r: { startedAt: string }) => r.startedAt);
      expect([...started].sort()).toEqual(started);
      for (const r of trend.runs.filter((x: { status: string }) => x.status === 'completed')) {
        expect(r.runId.startsWith(`${name}-`)).toBe(true);
        expect(r.runId.length).toBeLessThanOrEqual(name.length + 21);
        for (const c of ['Sorin', 'Surfboard'])
          expect(r.copilots[c]).toMatchObject({ score: expect.any(Number), n: 10 });
      }

      const [alert] = receiver.received;
      expect(alert.body.regressions.map((r: { copilot: string }) => r.copilot)).toEqual(['Surfboard']);
      expect(alert.body).toMatchObject({
        schedule: name,
        candidate: alert.body.runId,
        baseline: alert.body.baselineRunId,
        compare: expect.stringMatching(/^file:\/\/.*report\.html$/),
      });
      expect(alert.headers['idempotency-key']).toBe(`judgeflow-alert-${alert.body.runId}`);
      const runIds = trend.runs.map((r: { runId: string }) => r.runId);
      expect(runIds.indexOf(alert.body.baselineRunId)).toBe(runIds.indexOf(alert.body.runId) - 1);
      // The trend marks the same run: Surfboard regressed against the run before, Sorin did not.
      expect(trend.runs[runIds.indexOf(alert.body.runId)].vsPrevious.regressions).toEqual(['Surfboard']);
      // Never twice for one run; the run's report says it was delivered.
      expect(new Set(receiver.received.map((r) => r.body.runId)).size).toBe(receiver.received.length);
      const report = JSON.parse(fs.readFileSync((await store.getRun(alert.body.runId))!.reportPath!, 'utf8'));
      expect(report.alert).toMatchObject({
        status: 'delivered',
        regressions: ['Surfboard'],
        baselineRunId: alert.body.baselineRunId,
        url: receiver.url,
      });
      // The runs before the judge changed found nothing to report.
      const first = JSON.parse(fs.readFileSync((await store.getRun(runIds[0]))!.reportPath!, 'utf8'));
      expect(first.alert).toMatchObject({ status: 'no-baseline' });

      // Stability: the sim copilots answer alike every time; Surfboard's scores moved (the judge), Sorin's did not.
      const stable = JSON.parse((await cliInProcess(['stability', '--schedule', name, '--json'], env)).stdout);
      expect(stable.runs.length).toBe(trend.runs.length);
      expect(stable.copilots.Sorin).toMatchObject({
        meanSimilarity: 1,
        changedShare: 0,
        samples: 2,
        reading: 'stable',
      });
      expect(stable.copilots.Surfboard).toMatchObject({ meanSimilarity: 1, changedShare: 0, reading: 'judge drift' });
      expect(stable.copilots.Surfboard.scoreVarianceAcrossRuns).toBeGreaterThan(0);

      const described = JSON.parse((await cliInProcess(['schedule', 'describe', name, '--json'], env)).stdout);
      expect(described.runs.map((r: { runId: string }) => r.runId).reverse()).toEqual(runIds);
      expect(described.runs.every((r: { status: string }) => ['completed', 'running'].includes(r.status))).toBe(true);
      expect((await cliInProcess(['schedule', 'delete', name], env)).code).toBe(0);
    });
  } finally {
    receiver.server.close();
  }
});

test('a scheduled run that is cancelled, --alert-on any: an alert says it failed and why; the refresh fails with it', async () => {
  const receiver = await alertReceiver();
  const slow = await startSimServer({ latencyMs: 3_000 });
  try {
    await withWorker('schedule-alert-failed', async ({ client, taskQueue, storeFile, store }) => {
      const env = { JUDGEFLOW_STORE: storeFile, JUDGEFLOW_TASK_QUEUE: taskQueue };
      const dir = tempDir();
      const queries = writeQueries(dir, latticeGrid(2, 5));
      const configFile = path.join(dir, 'nightly.yaml');
      fs.writeFileSync(
        configFile,
        YAML.stringify({
          protocol: 'lattice',
          judge: { baseURL: sim.judge.url, model: 'sim-judge' },
          copilots: [{ name: 'Slow', type: 'openai', baseURL: slow.url, model: 'sim-terse', concurrency: 1 }],
          output: 'runs',
        }),
      );
      const name = `failing-${Date.now()}`;
      const created = await cliInProcess(
        [
          'schedule',
          'create',
          name,
          '--every',
          '1h',
          '--refresh',
          'none',
          '--queries',
          queries,
          '--collect-again',
          '--then-run',
          configFile,
          '--alert-url',
          receiver.url,
          '--alert-on',
          'any',
        ],
        env,
      );
      expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
      expect((await cliInProcess(['schedule', 'trigger', name], env)).code).toBe(0);
      let runId = '';
      await until(async () => {
        runId = (await store.scheduleSnapshots(name)).find((r) => r.runId)?.runId ?? '';
        return Boolean(runId && (await store.getRun(runId)));
      }, 40_000);
      await client.workflow.getHandle(runId).cancel();
      await until(() => receiver.received.length > 0, 40_000);
      expect(receiver.received[0].body).toMatchObject({
        schedule: name,
        runId,
        runStatus: 'failed',
        error: expect.stringMatching(/^cancelled/),
        regressions: [],
      });
      expect(receiver.received[0].body.problems[0]).toContain(`run ${runId} did not complete: cancelled`);
      expect((await cliInProcess(['schedule', 'delete', name], env)).code).toBe(0);
    });
  } finally {
    receiver.server.close();
    await slow.close();
  }
});
