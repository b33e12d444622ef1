import fs from 'node:fs';
import path from 'node:path';
import { cliInProcess } from './support/cliInProcess';
import { tempDir } from './support/harness';

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
