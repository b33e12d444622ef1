import path from 'node:path';
import { connectClient } from '../../client/connection';
import { createStudyApp, listen } from '../../client/study/app';
import { designStudy, inviteAnnotators } from '../../client/study/create';
import { SubmissionForwarder } from '../../client/study/forwarder';
import { writeStudyReport } from '../../client/study/report';
import { closeStudyWorkflow, startStudyWorkflow } from '../../client/study/workflow';
import { freePort, startDevServer, type StartedServer } from '../../client/temporalServer';
import type { Answer } from '../../core/study/types';
import { SqliteStore } from '../../stores/sqlite';
import { startWorkerProcess } from '../support/cli';
import { tempDir, uniqueQueue, until } from '../support/harness';
import { policyAnswer } from '../support/studyAnnotators';
import { writeFinishedRun } from '../support/studyRun';

jest.setTimeout(300_000);

test('worker and Temporal server killed mid-study: the app keeps acknowledging, and every acknowledged answer is in the report', async () => {
  const dir = tempDir('jf-study-kill-');
  const storeFile = path.join(dir, 'results.db');
  const store = new SqliteStore(storeFile);
  // A dedicated, persisted dev server: the shared test server cannot be killed.
  const port = await freePort();
  const serverOptions = {
    cli: process.env.TEMPORAL_CLI!,
    port,
    dbFile: path.join(dir, 'temporal.db'),
    headless: true,
    logFile: path.join(dir, 'temporal.log'),
  };
  let temporal: StartedServer = await startDevServer(serverOptions);
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: temporal.address,
    JUDGEFLOW_STORE: storeFile,
    JUDGEFLOW_TASK_QUEUE: uniqueQueue('study-kill'),
  };
  let worker = startWorkerProcess(env);
  const client = await connectClient(env);
  const forwarder = new SubmissionForwarder(store, () => connectClient(env), {
    updateTimeoutMs: 3_000,
    maxBackoffMs: 1_000,
  });
  const app = createStudyApp({ store, onSubmitted: () => forwarder.kick() });
  const base = await listen(app, '127.0.0.1', 0);
  forwarder.start();
  const killed = (child: typeof worker) =>
    new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  try {
    await writeFinishedRun(store, 'run-kill', path.join(dir, 'runs'));
    const study = await designStudy(store, {
      runId: 'run-kill',
      name: 'durable',
      perItem: 3,
      queries: 4,
      seed: 'kill',
    });
    await startStudyWorkflow(client, study, env.JUDGEFLOW_TASK_QUEUE);
    const people = await inviteAnnotators(store, 'durable', 3);
    const acknowledged = new Map<string, Answer>();
    const submit = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const token = people[i % people.length].token;
        const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
        const next = await (await fetch(`${base}/api/next`, { headers })).json();
        const id = next.assignment.id as string;
        const answer = await policyAnswer(store, id);
        const res = await fetch(`${base}/api/assignments/${id}/answer`, {
          method: 'POST',
          headers,
          body: JSON.stringify(answer),
        });
        expect(res.status).toBe(200); // acknowledged
        acknowledged.set(id, answer);
      }
    };
    const pending = async () => (await store.studies.pendingSubmissions(1000)).length;

    await submit(9);
    await until(async () => (await pending()) === 0, 120_000);

    worker.kill('SIGKILL');
    await killed(worker);
    await submit(9); // accepted while no worker runs
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await pending()).toBeGreaterThan(0);

    process.kill(temporal.pid, 'SIGKILL');
    await submit(9); // and while the Temporal server is down
    expect(await pending()).toBeGreaterThan(9);

    temporal = await startDevServer(serverOptions);
    worker = startWorkerProcess(env);
    await until(async () => (await pending()) === 0, 120_000);

    const closed = await closeStudyWorkflow(client, (await store.studies.getStudy('durable'))!);
    expect(closed).toMatchObject({ open: false, recorded: 27 });
    const { report } = await writeStudyReport(store, (await store.studies.getStudy('durable'))!, {
      outDir: path.join(dir, 'report'),
    });
    expect(report.counts).toMatchObject({ annotations: 27, pendingSubmissions: 0, rejectedSubmissions: 0 });
    const recorded = new Map((await store.studies.annotations('durable')).map((a) => [a.assignmentId, a.answer]));
    expect(recorded).toEqual(acknowledged);
  } finally {
    await forwarder.stop();
    await new Promise((r) => app.close(r));
    worker.kill('SIGKILL');
    await client.connection.close().catch(() => undefined);
    await temporal.stop().catch(() => undefined);
    await store.close();
  }
});
