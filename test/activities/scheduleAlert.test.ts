import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { format } from 'node:util';
import { alertActivities as alertActivitiesOf } from '../../activities/scheduleAlert';
import { saveSnapshot } from '../../core/snapshots/snapshots';
import type { Query, StoredJudgment } from '../../core/model/types';
import { latticeProtocol } from '../../rubrics/lattice';
import { SqliteStore } from '../../stores/sqlite';
import { tempDir } from '../support/harness';
import { quietActivityEnvironment } from '../support/quietTemporal';

const judge = { model: 'j', baseURL: 'http://127.0.0.1:1/v1', temperature: 0 };
const j = (runId: string, queryId: string, copilot: string, score: number): StoredJudgment => ({
  runId,
  queryId,
  copilot,
  rubricVersion: 'v1',
  status: 'ok',
  scores: { D1: score, D2: score },
  rationales: null,
  total: 2 * score,
  rank: null,
  position: null,
  error: null,
  judge: { ...judge, rubricVersion: 'v1' },
  attempts: 1,
  createdAt: '2025-01-01T00:00:00Z',
});

/** The alert activity as a worker runs it: inside an activity (first attempt; `lastAttempt` says which is the last). */
function alertActivities(deps: Parameters<typeof alertActivitiesOf>[0]) {
  const { refreshAlert } = alertActivitiesOf(deps);
  return {
    refreshAlert: (input: Parameters<typeof refreshAlert>[0]) => quietActivityEnvironment().run(refreshAlert, input),
  };
}

/** A receiver that answers with the next status of `statuses` (then 204) and keeps what it was sent. */
async function receiver(statuses: number[]) {
  const got: any[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(statuses.shift() ?? 204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    got,
    close: () => new Promise((r) => server.close(r)),
  };
}

test('the alert step: a failed POST throws for Temporal to retry, a delivered one is never sent again, the last failure is recorded', async () => {
  const dir = tempDir();
  const store = new SqliteStore(path.join(dir, 'results.db'));
  const hook = await receiver([500, 503]);
  try {
    const queries: Query[] = Array.from({ length: 10 }, (_, i) => ({
      id: `q${i}`,
      text: `question ${i}`,
      task: 'T1',
      category: 'C1',
    }));
    const { snapshotId } = await saveSnapshot(store, latticeProtocol.labelsOf, {
      queries,
      parentId: null,
      meta: { generator: 'test' },
    });
    const ids = [
      's-20261201-0600-aaaaaa',
      's-20261202-0600-bbbbbb',
      's-20261203-0600-cccccc',
      's-20261204-0600-dddddd',
    ];
    for (const [k, runId] of ids.entries()) {
      await store.createRun({
        runId,
        protocol: 'lattice',
        snapshotId,
        rubricVersion: 'v1',
        judge,
        copilots: ['Ace', 'Bolt'],
        startedAt: `2026-12-0${k + 1}T06:00:00Z`,
        sourceRunId: null,
        config: { output: path.join(dir, 'runs') },
      });
      await store.recordScheduleSnapshot({
        schedule: 's',
        workflowId: `wf-${k}`,
        snapshotId,
        parentId: null,
        createdAt: `2026-12-0${k + 1}T06:00:00Z`,
        runId,
      });
      for (const [i, q] of queries.entries())
        for (const c of ['Ace', 'Bolt'])
          await store.putJudgment(j(runId, q.id, c, 4 + (i % 3) - (c === 'Ace' && k >= 2 ? 2 : 0)));
      const reportPath = path.join(dir, 'runs', runId, 'report.json');
      fs.mkdirSync(path.dirname(reportPath), { recursive: true });
      fs.writeFileSync(reportPath, JSON.stringify({ runId }));
      await store.finishRun(runId, 'completed', reportPath, null, `2026-12-0${k + 1}T06:05:00Z`);
    }
    const { refreshAlert } = alertActivities({ store, env: {} });
    const alert = { url: hook.url, on: 'regression' as const };

    // Run 2 did not regress against run 1: nothing is sent.
    expect(await refreshAlert({ schedule: 's', runId: ids[1], alert, lastAttempt: 5 })).toMatchObject({
      status: 'not-needed',
      baselineRunId: ids[0],
      regressions: [],
    });
    // Run 3: Ace fell. The receiver fails twice (each attempt throws, for Temporal's retry with back-off), then takes it.
    await expect(refreshAlert({ schedule: 's', runId: ids[2], alert, lastAttempt: 5 })).rejects.toThrow(/HTTP 500/);
    await expect(refreshAlert({ schedule: 's', runId: ids[2], alert, lastAttempt: 5 })).rejects.toThrow(/HTTP 503/);
    expect(await refreshAlert({ schedule: 's', runId: ids[2], alert, lastAttempt: 5 })).toMatchObject({
      status: 'delivered',
      baselineRunId: ids[1],
      regressions: ['Ace'],
    });
    expect(hook.got).toHaveLength(3);
    expect(hook.got[2]).toMatchObject({
      schedule: 's',
      runId: ids[2],
      baselineRunId: ids[1],
      baseline: ids[1],
      candidate: ids[2],
    });
    expect(hook.got[2].regressions.map((r: { copilot: string }) => r.copilot)).toEqual(['Ace']);
    expect(hook.got[2].compare).toMatch(/^file:\/\/.*compare-s-20261202-0600-bbbbbb\/report\.html$/);
    // Asked again (a retried workflow task, a replay): not sent twice.
    expect(await refreshAlert({ schedule: 's', runId: ids[2], alert, lastAttempt: 5 })).toMatchObject({
      status: 'already-delivered',
    });
    expect(hook.got).toHaveLength(3);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'runs', ids[2], 'report.json'), 'utf8')).alert).toMatchObject({
      status: 'delivered',
      regressions: ['Ace'],
      url: hook.url,
    });

    // --alert-on any: the first run (no baseline) is reported too; a receiver that never answers is recorded as failed on the last attempt.
    const down = { url: 'http://127.0.0.1:1/', on: 'any' as const };
    expect(await refreshAlert({ schedule: 's', runId: ids[0], alert: down, lastAttempt: 1 })).toMatchObject({
      status: 'failed',
      baselineRunId: null,
      error: expect.stringContaining('127.0.0.1:1'),
    });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'runs', ids[0], 'report.json'), 'utf8')).alert).toMatchObject({
      status: 'failed',
    });

    // --alert-url-env: the URL (a secret webhook) comes from the worker's environment and is named by its variable only.
    const unset = alertActivities({ store, env: {} }).refreshAlert;
    const secret = { urlEnv: 'JF_HOOK', on: 'any' as const };
    expect(
      await alertActivities({ store, env: { JF_HOOK: hook.url } }).refreshAlert({
        schedule: 's',
        runId: ids[3],
        alert: secret,
        lastAttempt: 5,
      }),
    ).toMatchObject({ status: 'delivered', regressions: [] });
    expect(hook.got).toHaveLength(4);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'runs', ids[3], 'report.json'), 'utf8')).alert.url).toBe(
      '$JF_HOOK',
    );
    expect(await unset({ schedule: 's', runId: `${ids[3]}-other`, alert: secret, lastAttempt: 5 })).toMatchObject({
      status: 'failed',
      error: "JF_HOOK is not set in the worker's environment (the alert URL)",
    });
  } finally {
    await hook.close();
    await store.close();
  }
});

/** A receiver answering every POST with a redirect to `location(port)`; it keeps the paths it was posted. */
async function redirecting(status: number, location: (self: string) => string) {
  const posted: Array<{ path: string; key: unknown }> = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      posted.push({ path: req.url ?? '', key: req.headers['idempotency-key'] });
      if (req.url === '/final') return void res.writeHead(204).end();
      res.writeHead(status, { location: location(`http://127.0.0.1:${(server.address() as AddressInfo).port}`) }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    posted,
    close: () => new Promise((r) => server.close(r)),
  };
}

test('alert redirects: a 307 to another host is not followed (recorded failed with the final status), one within the host is; a failed scheduled run is alerted with its reason; one log line per failure', async () => {
  const dir = tempDir();
  const store = new SqliteStore(path.join(dir, 'results.db'));
  const other = await receiver([]);
  // "Another host": the same machine under another origin (its own port); nothing may be posted there.
  const away = await redirecting(307, () => `${other.url}stolen`);
  const within = await redirecting(307, (self) => `${self}/final`);
  // The activity's log (test/support/quietTemporal.ts: to console, one call an entry): kept here to count its entries.
  const logged: string[] = [];
  const stderr = jest
    .spyOn(console, 'error')
    .mockImplementation((...args: unknown[]) => void logged.push(format(...args)));
  try {
    const queries: Query[] = [{ id: 'q0', text: 'question', task: 'T1', category: 'C1' }];
    const { snapshotId } = await saveSnapshot(store, latticeProtocol.labelsOf, {
      queries,
      parentId: null,
      meta: { generator: 'test' },
    });
    const runs = ['r-20261201-0600-aaaaaa', 'r-20261202-0600-bbbbbb', 'r-20261203-0600-cccccc'];
    for (const [k, runId] of runs.entries()) {
      await store.createRun({
        runId,
        protocol: 'lattice',
        snapshotId,
        rubricVersion: 'v1',
        judge,
        copilots: ['Ace'],
        startedAt: `2026-12-0${k + 1}T06:00:00Z`,
        sourceRunId: null,
        config: { output: path.join(dir, 'runs') },
      });
      await store.recordScheduleSnapshot({
        schedule: 'r',
        workflowId: `wf-${k}`,
        snapshotId,
        parentId: null,
        createdAt: `2026-12-0${k + 1}T06:00:00Z`,
        runId,
      });
    }
    const { refreshAlert } = alertActivities({ store, env: {} });

    const refused = await refreshAlert({
      schedule: 'r',
      runId: runs[0],
      alert: { url: away.url, on: 'any' },
      lastAttempt: 1,
      failure: 'cancelled (judgeflow cancel, or from the Temporal UI)',
    });
    expect(refused).toMatchObject({
      status: 'failed',
      httpStatus: 307,
      error: expect.stringMatching(
        /^HTTP 307 from .*: redirected to another host \(http:\/\/127\.0\.0\.1:\d+\), not followed$/,
      ),
    });
    expect(other.got).toEqual([]);
    expect(away.posted).toHaveLength(1);

    // A redirect within the webhook's own host is followed, with the same body and Idempotency-Key.
    expect(
      await refreshAlert({
        schedule: 'r',
        runId: runs[1],
        alert: { url: within.url, on: 'regression' },
        lastAttempt: 1,
        failure: 'the judge failed',
      }),
    ).toMatchObject({ status: 'delivered', httpStatus: 204 });
    expect(within.posted).toEqual([
      { path: '/hook', key: `judgeflow-alert-${runs[1]}` },
      { path: '/final', key: `judgeflow-alert-${runs[1]}` },
    ]);

    // The body of a failed run's alert says so, even with --alert-on regression.
    const hook = await receiver([500]);
    try {
      // Retried by Temporal, as a benign failure: the worker logs no "Activity failed" stack trace for it.
      await expect(
        refreshAlert({
          schedule: 'r',
          runId: runs[2],
          alert: { url: hook.url, on: 'regression' },
          lastAttempt: 2,
          failure: 'store unreachable',
        }),
      ).rejects.toMatchObject({ message: expect.stringMatching(/attempt 1 of 2: HTTP 500/), category: 'BENIGN' });
      expect(
        await refreshAlert({
          schedule: 'r',
          runId: runs[2],
          alert: { url: hook.url, on: 'regression' },
          lastAttempt: 2,
          failure: 'store unreachable',
        }),
      ).toMatchObject({ status: 'delivered' });
      expect(hook.got.at(-1)).toMatchObject({
        runId: runs[2],
        runStatus: 'failed',
        error: 'store unreachable',
        problems: [`run ${runs[2]} did not complete: store unreachable`],
        regressions: [],
      });
    } finally {
      await hook.close();
    }
    // Each failure is one log entry (the refused redirect, the 500), with no stack trace.
    expect(logged.filter((l) => / \[WARN\] alert for .* not delivered/.test(l))).toHaveLength(2);
    for (const l of logged) expect(l).not.toMatch(/\n\s+at /);
  } finally {
    stderr.mockRestore();
    await Promise.all([away.close(), within.close(), other.close()]);
    await store.close();
  }
});
