import fs from 'node:fs';
import path from 'node:path';
import { runInput } from '../../client/startRun';
import { startSimServer } from '../../sim/server';
import { benchmarkRun } from '../../workflows';
import { progressQuery } from '../../contract/control';
import type { RunResult } from '../../contract/run';
import { cliInProcess } from '../support/cliInProcess';
import { latticeGrid, runConfig, simCopilots, tempDir, until, withWorker } from '../support/harness';
import { scriptedLatticeJudge } from '../support/judges';
import { copyRubric } from '../support/rubricCopy';

/**
 * A copilot with a wrong answerPath trips the breaker; `judgeflow resume RUN_ID --config fixed.json` replaces its
 * settings (the stored record and the workflow's), and the run completes with its later items answered. A config
 * that would change the rubric is refused, naming it, and the run stays paused. `judgeflow tune` on the paused run
 * changes a copilot's limits, recorded old → new.
 */
jest.setTimeout(180_000);

test('resume --config fixes a copilot the breaker paused the run for; a config changing the rubric is refused; tune is recorded', async () => {
  const judge = await startSimServer({ handler: scriptedLatticeJudge });
  const copilots = await startSimServer({ latencyMs: 30 });
  try {
    await withWorker('resume-config', async (world) => {
      const env = {
        JUDGEFLOW_HOME: world.dir,
        JUDGEFLOW_STORE: world.storeFile,
        JUDGEFLOW_TASK_QUEUE: world.taskQueue,
      };
      const dir = tempDir();
      const myApi = {
        name: 'MyAPI',
        type: 'http',
        url: `${copilots.url}/chat/completions`,
        body: { model: 'sim-copilot', messages: [{ role: 'user', content: '{{query}}' }] },
        answerPath: 'data.text',
        concurrency: 1,
      };
      const fields = {
        protocol: 'lattice',
        queries: latticeGrid(4, 5), // 20 queries
        judge: { baseURL: judge.url, model: 'sim-judge' },
        copilots: [...simCopilots(copilots.url, { Good: 'sim-terse' }).map((c) => ({ ...c, concurrency: 1 })), myApi],
      };
      const config = runConfig(dir, fields);
      // The same config as a file (as `judgeflow run` would load it), with one thing changed.
      const configFile = (name: string, over: Record<string, unknown>) => {
        const file = path.join(dir, name);
        fs.writeFileSync(file, JSON.stringify({ ...fields, queries: config.queries, output: config.output, ...over }));
        return file;
      };
      const runId = `run-resume-config-${Date.now()}`;
      const handle = await world.client.workflow.start(benchmarkRun, {
        taskQueue: world.taskQueue,
        workflowId: runId,
        args: [runInput(config, runId)],
      });
      await until(async () => Boolean((await handle.query(progressQuery)).paused), 60_000);
      expect((await handle.query(progressQuery)).paused).toMatchObject({
        by: 'breaker',
        reason: expect.stringMatching(/^copilot MyAPI failing: .*answerPath "data\.text"/),
      });

      const rubricChanged = await cliInProcess(
        ['resume', runId, '--config', configFile('rubric.json', { rubric: copyRubric('lattice') })],
        env,
      );
      expect(rubricChanged.code).toBe(2);
      expect(rubricChanged.stderr).toMatch(
        /resume --config may change only .*this config changes rubric, which would change what run/s,
      );
      const stillPaused = JSON.parse((await cliInProcess(['status', runId, '--json'], env)).stdout);
      expect(stillPaused).toMatchObject({ status: 'paused', paused: { by: 'breaker' } });

      // Tuning a paused run: a copilot that does not exist is refused with the valid names; a real change is recorded.
      const unknown = await cliInProcess(['tune', runId, '--copilot', 'Nope', '--concurrency', '2'], env);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/no copilot "Nope" asked live; its copilots with limits are: Good, MyAPI/);
      const tuned = await cliInProcess(
        [
          'tune',
          runId,
          '--copilot',
          'Good',
          '--concurrency',
          '2',
          '--requests-per-minute',
          '600',
          '--reason',
          'more throughput',
        ],
        env,
      );
      expect(tuned.stderr).toBe('');
      expect(tuned.stdout).toContain('copilot Good concurrency 1 → 2; copilot Good requestsPerMinute unset → 600');
      const afterTune = JSON.parse((await cliInProcess(['status', runId, '--json'], env)).stdout);
      expect(afterTune.limits).toEqual({ 'copilot:Good': { concurrency: 2, requestsPerMinute: 600 } });
      expect(afterTune.history.at(-1)).toMatchObject({
        action: 'tune',
        reason: 'more throughput',
        limits: [
          { endpoint: 'copilot Good', limit: 'concurrency', from: 1, to: 2 },
          { endpoint: 'copilot Good', limit: 'requestsPerMinute', from: null, to: 600 },
        ],
      });

      const failedBefore = (await world.store.responses(runId)).filter((r) => r.copilot === 'MyAPI').length;
      const fixed = configFile('fixed.json', {
        copilots: [fields.copilots[0], { ...myApi, answerPath: 'choices[0].message.content' }],
      });
      const resumed = await cliInProcess(['resume', runId, '--config', fixed], env);
      expect(resumed.stderr).toBe('');
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toMatch(
        /resumed \(it was paused: copilot MyAPI failing.*config replaced: copilot MyAPI answerPath/,
      );

      const result = (await handle.result()) as RunResult;
      expect(result.progress.stage).toBe('done');
      const mine = (await world.store.responses(runId)).filter((r) => r.copilot === 'MyAPI');
      expect(mine).toHaveLength(20);
      // Those that failed before the fix stay failed (retry --failed asks them again); every later one is answered.
      expect(mine.filter((r) => r.status === 'failed')).toHaveLength(failedBefore);
      expect(mine.filter((r) => r.status === 'ok')).toHaveLength(20 - failedBefore);
      expect(
        ((await world.store.getRun(runId))!.config as { copilots: Array<{ answerPath?: string }> }).copilots[1]
          .answerPath,
      ).toBe('choices[0].message.content');
      const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
      expect(report.control.history.map((h: { action: string }) => h.action)).toEqual([
        'pause',
        'tune',
        'config',
        'resume',
      ]);
      expect(report.control.history[2]).toMatchObject({
        reason: 'config replaced: copilot MyAPI answerPath',
        settings: ['copilot MyAPI answerPath'],
      });
      const md = fs.readFileSync(result.reportPath.replace(/report\.json$/, 'report.md'), 'utf8');
      expect(md).toContain(
        'tune (user): copilot Good concurrency 1 → 2; copilot Good requestsPerMinute unset → 600 (more throughput)',
      );
    });
  } finally {
    await judge.close();
    await copilots.close();
  }
});
