import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { startWorkflow } from '../../client/runWorkflow';
import { benchmarkRun } from '../../workflows';
import { REPO, tempDir, uniqueQueue } from '../support/harness';

jest.setTimeout(300_000);

const CLI = path.join(REPO, 'bin', 'judgeflow.js');

test('the demo says it reuses the Temporal server already answering, and prints the report.html to open and where report.json is', async () => {
  const cwd = tempDir('jf-demo-');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    JUDGEFLOW_HOME: path.join(cwd, 'home'),
    JUDGEFLOW_TASK_QUEUE: uniqueQueue('demo'),
    JUDGEFLOW_PROGRESS: 'lines',
  };
  delete env.OPENAI_API_KEY;
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      [CLI, 'demo', '--no-kill'],
      { cwd, env, timeout: 280_000, maxBuffer: 16 * 1024 * 1024 },
      (error, out, err) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout: out, stderr: err }),
    ),
  );
  expect({ code, stderr: code ? stderr : '' }).toEqual({ code: 0, stderr: '' });
  // The jest global setup's server was already up: the demo says it used it rather than starting one.
  expect(stdout).toContain(
    `Using the Temporal server already answering at ${process.env.TEMPORAL_ADDRESS}: a server this judgeflow did not start.`,
  );
  const html = /^Run \S+ completed\. Open its report in a browser: (.+report\.html)$/m.exec(stdout);
  expect(html).not.toBeNull();
  expect(fs.existsSync(html![1])).toBe(true);
  const dir = path.dirname(html![1]);
  expect(stdout).toContain(`Beside it in ${dir}: report.md, report.json (every figure, for scripts)`);
  expect(fs.existsSync(path.join(dir, 'report.json'))).toBe(true);

  // report.md: each dimension named once (the refusal dimension's id is its name), and the cost table report.html has.
  const md = fs.readFileSync(path.join(dir, 'report.md'), 'utf8');
  expect(md).not.toContain('Refusal Refusal');
  expect(md).toMatch(/^\| copilot \| .* \| Refusal Boundary Recognition and Clean Refusal \|$/m); // the id once, then the paper's name
  expect(md).toContain('## What the run cost');
  for (const [who, model] of [
    ['copilot Thorough', 'sim-thorough'],
    ['copilot Balanced', 'sim-balanced'],
    ['copilot Terse', 'sim-terse'],
    ['judge sim-judge', 'sim-judge'],
  ])
    expect(md).toMatch(new RegExp(`^\\| ${who} \\| ${model} \\| \\d+ \\| 0 \\|`, 'm'));
  expect(md).toMatch(/Total: \d+ calls, \d+ tokens in, \d+ tokens out \(no prices configured: add `pricing: /);
  // report.html's answers carry task and category names beside their ids.
  const page = fs.readFileSync(html![1], 'utf8');
  expect(page).toContain('"labels":["T1 Protocol Mechanism Interpretation","C1 Basic"]');
});

test('a Temporal server that accepts the start but does not answer in time is named, with what to do, not a bare DEADLINE_EXCEEDED', async () => {
  // What @grpc/grpc-js rejects with when the deadline passes (status 4), as the SDK's client passes it on.
  const deadline = Object.assign(new Error('4 DEADLINE_EXCEEDED: Deadline exceeded after 10.001s'), {
    code: 4,
    details: 'Deadline exceeded after 10.001s',
    metadata: {},
  });
  const client = {
    connection: { options: { address: '127.0.0.1:7233' } },
    workflow: { start: async () => Promise.reject(deadline) },
  } as unknown as Client;
  await expect(
    startWorkflow(client, benchmarkRun, { taskQueue: 'q', workflowId: 'w', args: [{} as never] }),
  ).rejects.toThrow(
    /^The Temporal server at 127\.0\.0\.1:7233 accepted the connection but did not answer the workflow start in time \(4 DEADLINE_EXCEEDED: .*\)\. It may be a stale or overloaded server: .*judgeflow server stop.*TEMPORAL_ADDRESS/,
  );
});
