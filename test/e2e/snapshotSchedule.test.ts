import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { Client } from '@temporalio/client';
import { startSimServer, type SimHandler } from '../../sim/server';
import type { RefreshResult } from '../../contract/snapshot';
import { cliInProcess } from '../support/cliInProcess';
import { tempDir, withWorker } from '../support/harness';
import { hashInt, scriptedLatticeJudge } from '../support/judges';
import { simServersForFile } from '../support/sims';

let n = 0;
/** A generator that never repeats itself: every query carries a fresh number and its own words. */
const generator: SimHandler = (body) => {
  if (body.response_format?.json_schema?.name !== 'lattice_queries') return undefined;
  const user = String(body.messages.find((m: any) => m.role === 'user').content);
  const count = Number(user.match(/Write (\d+) distinct queries/)![1]);
  const words =
    'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango'.split(
      ' ',
    );
  const queries = Array.from({ length: count }, () => {
    const k = n++;
    return `Question ${k}: ${[0, 1, 2, 3, 4].map((j) => words[hashInt(`${k}|${j}`) % words.length]).join(' ')} ${k * 7919}?`;
  });
  return JSON.stringify({ queries });
};

const sim = simServersForFile({ gen: { handler: generator }, judge: { handler: scriptedLatticeJudge }, copilots: {} });

/** Trigger the schedule and wait for the refresh it starts (the k-th action) to finish. */
async function triggerAndWait(
  client: Client,
  name: string,
  env: Record<string, string>,
  k: number,
): Promise<RefreshResult> {
  expect((await cliInProcess(['schedule', 'trigger', name], env)).code).toBe(0);
  const handle = client.schedule.getHandle(name);
  for (let i = 0; i < 600; i++) {
    const d = await handle.describe();
    // Two triggers in one second share a workflow id (the schedule appends the time to the second): the run id picks the action.
    const action = d.info.recentActions[k - 1]?.action.workflow;
    if (action) return client.workflow.getHandle(action.workflowId, action.firstExecutionRunId).result();
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`schedule ${name} did not start action ${k}`);
}

test('a schedule triggered twice makes two snapshots, the first the parent of the second, each benchmarked with --then-run; delete removes it', async () => {
  await withWorker('schedule', async ({ client, taskQueue, storeFile, store }) => {
    const env = { JUDGEFLOW_STORE: storeFile, JUDGEFLOW_TASK_QUEUE: taskQueue };
    const dir = tempDir();
    const configFile = path.join(dir, 'weekly.yaml');
    fs.writeFileSync(
      configFile,
      YAML.stringify({
        protocol: 'lattice',
        judge: { baseURL: sim.judge.url, model: 'judge' },
        copilots: [{ name: 'Terse', type: 'openai', baseURL: sim.copilots.url, model: 'sim-terse' }],
        output: 'runs',
      }),
    );
    const name = `weekly-${Date.now()}`;
    const create = [
      'schedule',
      'create',
      name,
      '--every',
      '7d',
      '--refresh',
      'generate',
      '--per-cell',
      '2',
      '--tasks',
      'T1',
      '--categories',
      'C1,C2',
      '--base-url',
      sim.gen.url,
      '--model',
      'gen',
      '--then-run',
      configFile,
    ];

    // Bad input is refused before anything reaches the server.
    const refused = await cliInProcess([...create.slice(0, 3), '--every', '7 days', ...create.slice(5)], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--every 7 days');
    const wrongProtocol = path.join(dir, 'cab.yaml');
    fs.writeFileSync(
      wrongProtocol,
      YAML.stringify({
        protocol: 'cab',
        judge: { baseURL: sim.judge.url, model: 'j' },
        copilots: [{ name: 'A', type: 'openai', baseURL: sim.copilots.url, model: 'm' }],
      }),
    );
    const mismatch = await cliInProcess([...create.slice(0, -1), wrongProtocol], env);
    expect(mismatch.code).toBe(2);
    expect(mismatch.stderr).toContain('use protocol: lattice');

    const created = await cliInProcess(create, env);
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    expect((await cliInProcess(create, env)).stderr).toContain('already exists');
    const listed = JSON.parse((await cliInProcess(['schedule', 'list', '--json'], env)).stdout);
    expect(listed).toContainEqual(
      expect.objectContaining({ name, spec: 'every 7d', paused: false, refresh: 'generate' }),
    );
    const described = await client.schedule.getHandle(name).describe();
    expect(described.policies.overlap).toBe('SKIP');

    const first = await triggerAndWait(client, name, env, 1);
    const second = await triggerAndWait(client, name, env, 2);
    expect(first.parentId).toBeNull();
    expect(second.parentId).toBe(first.snapshotId);
    expect(second.snapshotId).not.toBe(first.snapshotId);
    expect(second.unchanged).toBe(false);
    expect(await store.getSnapshot(second.snapshotId)).toMatchObject({
      parentId: first.snapshotId,
      queryCount: 4,
      meta: { generator: 'lattice-generate', schedule: name },
    });

    // --then-run: a benchmark run on each new snapshot, as a child workflow, with the config's queries replaced.
    for (const r of [first, second]) {
      const run = (await store.getRun(r.runId!))!;
      expect(run).toMatchObject({ snapshotId: r.snapshotId, status: 'completed', protocol: 'lattice' });
      expect((run.config as { queries: string }).queries).toBe(`snapshot:${r.snapshotId}`);
      expect(JSON.parse(fs.readFileSync(r.reportPath!, 'utf8')).copilots.Terse.n).toBe(4);
      expect(r.reportPath!.startsWith(path.join(dir, 'runs'))).toBe(true);
    }

    const d = JSON.parse((await cliInProcess(['schedule', 'describe', name, '--json'], env)).stdout);
    expect(d.actionsTaken).toBe(2);
    expect(
      d.snapshots.map((s: { snapshotId: string; parentId: string | null; runId: string }) => [
        s.snapshotId,
        s.parentId,
        s.runId,
      ]),
    ).toEqual([
      [second.snapshotId, first.snapshotId, second.runId],
      [first.snapshotId, null, first.runId],
    ]);

    expect((await cliInProcess(['schedule', 'pause', name], env)).code).toBe(0);
    expect((await client.schedule.getHandle(name).describe()).state.paused).toBe(true);
    expect((await cliInProcess(['schedule', 'unpause', name], env)).code).toBe(0);

    expect((await cliInProcess(['schedule', 'delete', name], env)).code).toBe(0);
    const gone = await cliInProcess(['schedule', 'describe', name], env);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toContain(`no schedule "${name}"`);
    expect(
      JSON.parse((await cliInProcess(['schedule', 'list', '--json'], env)).stdout).map((s: { name: string }) => s.name),
    ).not.toContain(name);
    expect((await cliInProcess(['schedule', 'trigger', name], env)).code).toBe(2);
  });
});

test('a curate schedule picks the newest traffic file of a directory each time', async () => {
  await withWorker('schedule-curate', async ({ client, taskQueue, storeFile, store }) => {
    const env = { JUDGEFLOW_STORE: storeFile, JUDGEFLOW_TASK_QUEUE: taskQueue };
    const dir = tempDir();
    const write = (file: string, queries: string[], mtime: Date) => {
      fs.writeFileSync(path.join(dir, file), queries.map((query) => JSON.stringify({ query })).join('\n') + '\n');
      fs.utimesSync(path.join(dir, file), mtime, mtime);
    };
    write(
      'traffic-1.jsonl',
      ['How does Lido staking work exactly?', 'Is Solana faster than Ethereum for payments?'],
      new Date('2025-01-01'),
    );
    const tagger = await startSimServer({
      handler: (body) => {
        if (body.response_format?.json_schema?.name !== 'query_categories') return undefined;
        const ids = [...String(body.messages[1].content).matchAll(/^\[(q\d+)\]/gm)].map((m) => m[1]);
        return JSON.stringify({ labels: Object.fromEntries(ids.map((id) => [id, 'Crypto Concepts & How-To'])) });
      },
    });
    try {
      const name = `traffic-${Date.now()}`;
      const created = await cliInProcess(
        [
          'schedule',
          'create',
          name,
          '--cron',
          '0 6 * * MON',
          '--refresh',
          'curate',
          '--from',
          dir,
          '--target',
          '10',
          '--base-url',
          tagger.url,
          '--model',
          't',
        ],
        env,
      );
      expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
      const first = await triggerAndWait(client, name, env, 1);
      write(
        'traffic-2.jsonl',
        [
          'What is a rollup sequencer and why does it matter?',
          'How do I revoke token approvals safely?',
          'Explain impermanent loss with numbers',
        ],
        new Date('2025-02-01'),
      );
      const second = await triggerAndWait(client, name, env, 2);
      expect(first.source).toBe(path.join(dir, 'traffic-1.jsonl'));
      expect(second.source).toBe(path.join(dir, 'traffic-2.jsonl'));
      expect(second.parentId).toBe(first.snapshotId);
      expect((await store.snapshotQueries(second.snapshotId)).map((q) => q.tags)).toEqual([
        'Crypto Concepts & How-To',
        'Crypto Concepts & How-To',
        'Crypto Concepts & How-To',
      ]);
      expect((await store.getSnapshot(second.snapshotId))!.meta).toMatchObject({
        source: path.join(dir, 'traffic-2.jsonl'),
        schedule: name,
      });
      expect((await cliInProcess(['schedule', 'delete', name], env)).code).toBe(0);
    } finally {
      await tagger.close();
    }
  });
});
