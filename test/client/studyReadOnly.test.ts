import fs from 'node:fs';
import path from 'node:path';
import { cliInProcess } from '../support/cliInProcess';
import { tempDir } from '../support/harness';

test('study list and study status in a fresh home create nothing (read-only commands, like report)', async () => {
  const home = path.join(tempDir('jf-study-ro-'), 'home');
  const list = await cliInProcess(['study', 'list'], { JUDGEFLOW_HOME: home });
  expect(list.code).toBe(0);
  expect(list.stderr).toContain('No studies: there is no results store at');
  const status = await cliInProcess(['study', 'status', 'pref'], { JUDGEFLOW_HOME: home });
  expect(status.code).toBe(2);
  expect(status.stderr).toContain('no study named pref');
  expect(fs.existsSync(home)).toBe(false);
});
