import fs from 'node:fs';
import path from 'node:path';
import { cliInProcess } from '../support/cliInProcess';
import { tempDir } from '../support/harness';

// main() is what bin/judgeflow.js exits with: these check its own exit-code mapping, not a copy of it.
test('main(): 0 for help, 2 for bad input with the message on stderr, 1 for any other failure', async () => {
  expect((await cliInProcess(['--help'], {})).code).toBe(0);

  const unknown = await cliInProcess(['no-such-command'], {});
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('judgeflow no-such-command: unknown command "no-such-command"');

  const badOption = await cliInProcess(['runs', '--no-such-option'], {});
  expect(badOption.code).toBe(2);
  expect(badOption.stderr).toMatch(/^judgeflow runs: /);

  const notAStore = path.join(tempDir(), 'results.db');
  fs.writeFileSync(notAStore, 'not a database');
  const broken = await cliInProcess(['runs'], { JUDGEFLOW_STORE: notAStore });
  expect(broken.code).toBe(1);
  expect(broken.stderr).toContain('judgeflow runs failed: file is not a database');
});

test('read-only commands run where there is no store say where runs live and create nothing', async () => {
  const home = path.join(tempDir(), '.judgeflow');
  const env = { JUDGEFLOW_HOME: home, JUDGEFLOW_STORE: '' };
  for (const args of [
    ['report', 'run-x'],
    ['snapshot', 'show', 'snap-x'],
    ['snapshot', 'diff', 'snap-a', 'snap-b'],
    ['snapshot', 'export', 'snap-x'],
    ['artefacts', 'run-x'],
    ['compare', 'run-a', 'run-b'],
  ]) {
    const r = await cliInProcess(args, env);
    expect({ args, code: r.code }).toEqual({ args, code: 2 });
    expect(r.stderr).toContain('results store');
  }
  const list = await cliInProcess(['snapshot', 'list'], env);
  expect(list.code).toBe(0);
  expect(list.stdout).toContain('No snapshots in');
  expect(fs.existsSync(home)).toBe(false);
});
