import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { replaceDirWhole, writeChunks, writeFileAtomic } from '../../../core/io/files';
import { REPO, tempDir } from '../../support/harness';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('writeFileAtomic / writeTextAtomic with concurrent writers', () => {
  test('two overlapping writes of one file (report racing its retry) both succeed; the file is one of them, whole', async () => {
    const file = path.join(tempDir('jf-files-'), 'report.json');
    const write = (text: string, delayMs: number) =>
      writeFileAtomic(file, async (tmp) => {
        fs.writeFileSync(tmp, text.slice(0, 10));
        await pause(delayMs); // the other writer runs meanwhile
        fs.appendFileSync(tmp, text.slice(10));
      });
    const a = 'A'.repeat(5000);
    const b = 'B'.repeat(7000);
    await Promise.all([write(a, 50), write(b, 10)]);
    expect([a, b]).toContain(fs.readFileSync(file, 'utf8'));
    expect(fs.readdirSync(path.dirname(file))).toEqual(['report.json']); // no temp file left behind
  });

  test('several processes rewriting one file never fail and never leave a mixed file', async () => {
    const dir = tempDir('jf-files-');
    const file = path.join(dir, 'results.csv');
    const script = `require('tsx/cjs'); const { writeTextAtomic } = require(${JSON.stringify(path.join(REPO, 'core', 'io', 'files.ts'))});
      const text = process.argv[1].repeat(200000); for (let i = 0; i < 30; i++) writeTextAtomic(${JSON.stringify(file)}, text);`;
    const run = (letter: string) =>
      new Promise<string>((resolve) =>
        execFile(process.execPath, ['-e', script, letter], { cwd: REPO }, (error, _out, stderr) =>
          resolve(error ? stderr || String(error) : ''),
        ),
      );
    const errors = await Promise.all(['x', 'y', 'z'].map(run));
    expect(errors).toEqual(['', '', '']);
    const content = fs.readFileSync(file, 'utf8');
    expect(content.length).toBe(200000);
    expect(new Set(content).size).toBe(1);
    expect(fs.readdirSync(dir)).toEqual(['results.csv']);
  });
});

describe('replaceDirWhole (a run report appears all together or not at all)', () => {
  const setup = () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'jf-swap-'));
    const dir = path.join(parent, 'run-1');
    fs.mkdirSync(path.join(dir, 'artefacts'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'report.json'), 'old');
    fs.writeFileSync(path.join(dir, 'report.html'), 'old');
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine');
    return { parent, dir };
  };

  test('filling fails half-way: the old files are all still there, and nothing else is left beside them', async () => {
    const { parent, dir } = setup();
    await expect(
      replaceDirWhole(dir, async (tmp) => {
        fs.writeFileSync(path.join(tmp, 'report.json'), 'new');
        throw new Error('killed while writing report.html');
      }),
    ).rejects.toThrow('killed');
    expect(fs.readFileSync(path.join(dir, 'report.json'), 'utf8')).toBe('old');
    expect(fs.readFileSync(path.join(dir, 'report.html'), 'utf8')).toBe('old');
    expect(fs.readdirSync(parent)).toEqual(['run-1']);
  });

  test('filled: every new file in place at once, what the directory held besides kept, no temporary left', async () => {
    const { parent, dir } = setup();
    await replaceDirWhole(dir, async (tmp) => {
      for (const name of ['report.json', 'report.html', 'report.md']) fs.writeFileSync(path.join(tmp, name), 'new');
      // Until the swap, readers see the old set only.
      expect(fs.existsSync(path.join(dir, 'report.md'))).toBe(false);
    });
    expect(fs.readdirSync(dir).sort()).toEqual(['artefacts', 'notes.txt', 'report.html', 'report.json', 'report.md']);
    expect(fs.readFileSync(path.join(dir, 'report.html'), 'utf8')).toBe('new');
    expect(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('mine');
    expect(fs.readdirSync(parent)).toEqual(['run-1']);
  });

  test('a directory that does not exist yet is created whole', async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'jf-swap-'));
    await replaceDirWhole(path.join(parent, 'a', 'run-2'), async (tmp) =>
      fs.writeFileSync(path.join(tmp, 'report.json'), '{}'),
    );
    expect(fs.readdirSync(path.join(parent, 'a'))).toEqual(['run-2']);
  });
});

describe('writeChunks', () => {
  test('pieces gathered into one file, in order', async () => {
    const file = path.join(tempDir('jf-chunks-'), 'out.txt');
    const pieces = Array.from({ length: 3_000 }, (_, i) => `line ${i}\n`);
    await writeChunks(file, pieces);
    expect(fs.readFileSync(file, 'utf8')).toBe(pieces.join(''));
  });

  test("pieces that fail: the write fails with their error, and the stream's own error (its folder removed meanwhile) is heard, not left unhandled", async () => {
    const dir = tempDir('jf-chunks-');
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      // As a stopped report rehearsal: its folder is gone, and its page's next read of the store fails.
      fs.rmSync(dir, { recursive: true, force: true });
      async function* pieces(): AsyncGenerator<string> {
        await new Promise((resolve) => setTimeout(resolve, 50)); // the file's open has failed by now
        throw new Error('the store read failed');
      }
      await expect(writeChunks(path.join(dir, 'report.html'), pieces())).rejects.toThrow('the store read failed');
      // The file's own failure (ENOENT: the folder is gone) came after: give it the turns it needs to surface.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
