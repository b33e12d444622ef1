import fs from 'node:fs';
import path from 'node:path';
import { closeSharedBrowser } from '../../activities/adapters/browser';
import { cliInProcess } from '../support/cliInProcess';
import { REPO, tempDir, uniqueQueue } from '../support/harness';
import { simServersForFile } from '../support/sims';

jest.setTimeout(120_000);

const sims = simServersForFile({ sim: {} });
afterAll(() => closeSharedBrowser());

// The README's quick start as a user runs it, with the simulator on a free port instead of 8000.
test('examples/quickstart.yaml runs end to end: every copilot type answers, the csv gap is missing, the judge scores the rest', async () => {
  const { sim } = sims;
  const dir = tempDir('jf-quickstart-');
  const origin = sim.url.replace(/\/v1$/, '');
  for (const file of ['quickstart.yaml', 'quickstart.jsonl', 'quickstart-answers.csv']) {
    const text = fs.readFileSync(path.join(REPO, 'examples', file), 'utf8');
    fs.writeFileSync(
      path.join(dir, file),
      file.endsWith('.yaml')
        ? text.split('http://127.0.0.1:8000').join(origin).replace('output: ../runs', 'output: runs')
        : text,
    );
  }
  const env = {
    JUDGEFLOW_HOME: path.join(dir, 'home'),
    JUDGEFLOW_TASK_QUEUE: uniqueQueue('quickstart'),
    JUDGEFLOW_PROGRESS: '',
  };
  const { code, stdout, stderr } = await cliInProcess(
    ['run', '--config', path.join(dir, 'quickstart.yaml'), '--json'],
    env,
  );
  expect({ code, stderr: code ? stderr : '' }).toEqual({ code: 0, stderr: '' });
  const { reportPath } = JSON.parse(stdout.trim().split('\n').pop()!);
  const report = JSON.parse(fs.readFileSync(path.join(path.dirname(reportPath), 'report.json'), 'utf8'));
  const summary = Object.fromEntries(
    Object.entries(report.copilots as Record<string, { n: number; missingResponses: number; failed: number }>).map(
      ([name, c]) => [name, { n: c.n, missing: c.missingResponses, failed: c.failed }],
    ),
  );
  expect(summary).toEqual({
    Thorough: { n: 5, missing: 0, failed: 0 },
    Terse: { n: 5, missing: 0, failed: 0 },
    WebChat: { n: 5, missing: 0, failed: 0 },
    Archive: { n: 4, missing: 1, failed: 1 },
  });
  expect(report.simulated).toBe(true);
  const models = new Set(sim.requests.map((r) => r.model));
  expect([...models].sort()).toEqual(['sim-copilot', 'sim-judge', 'sim-terse', 'sim-thorough']);
});
