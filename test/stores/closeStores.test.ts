import fs from 'node:fs';
import path from 'node:path';
import { closeStores, openStore } from '../../stores';
import { tempDir } from '../support/harness';

/**
 * The shared stores (openStore's) are closed by closeStores, which the test environment calls after each test file
 * through a global symbol: left open, a jest worker's SQLite stores were checkpointed as it exited, and tens of them
 * outlasted jest's 0.5 s wait for the worker ("A worker process has failed to exit gracefully", issue 30).
 */
test('closeStores closes every shared store (its write-ahead log folded in); the next openStore opens a new one', async () => {
  const dir = tempDir('jf-close-stores-');
  const target = { kind: 'sqlite' as const, file: path.join(dir, 'results.db') };
  const store = await openStore(target);
  await store.migrate();
  const id = await store.storeId();
  expect(await openStore(target)).toBe(store);
  expect(fs.existsSync(`${target.file}-wal`)).toBe(true);
  await closeStores();
  expect(fs.existsSync(`${target.file}-wal`)).toBe(false); // closed: the log checkpointed and removed now, not at exit
  await expect(store.storeId()).rejects.toThrow(/not open/);
  const again = await openStore(target);
  expect(again).not.toBe(store);
  expect(await again.storeId()).toBe(id);
  await closeStores();
  await closeStores(); // nothing left to close: no error
  expect((globalThis as Record<symbol, unknown>)[Symbol.for('judgeflow.closeStores')]).toBe(closeStores);
  fs.rmSync(dir, { recursive: true, force: true });
});
