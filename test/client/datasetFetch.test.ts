import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { cliInProcess } from '../support/cliInProcess';
import { tempDir } from '../support/harness';
import { cabFixtureRows, writeCabFixture } from '../support/cabDataset';
import { cabReferenceBodies } from '../support/cabReferenceFixture';

/** A local stand-in for the reference repository's raw file (tests never reach a public host). */
let server: http.Server;
let base: string;
const bodies: Record<string, string> = {};
beforeAll(async () => {
  const dir = tempDir('jf-dataset-src-');
  bodies['/ok.csv'] = fs.readFileSync(writeCabFixture(path.join(dir, 'ok')), 'utf8');
  Object.assign(bodies, Object.fromEntries(Object.entries(cabReferenceBodies()).map(([k, v]) => [`/ref${k}`, v])));
  bodies['/short.csv'] = fs.readFileSync(
    writeCabFixture(path.join(dir, 'short'), cabFixtureRows().slice(0, 20)),
    'utf8',
  );
  server = http.createServer((req, res) =>
    bodies[req.url!]
      ? res.writeHead(200, { 'content-type': 'text/csv' }).end(bodies[req.url!])
      : res.writeHead(404).end('not found'),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('judgeflow dataset fetch cab', () => {
  test('downloads the CSV (JUDGEFLOW_DATASET_URL), checks its shape, and writes it where --out says', async () => {
    const out = path.join(tempDir('jf-dataset-'), 'data', 'dataset.csv');
    const result = await cliInProcess(['dataset', 'fetch', 'cab', '--out', out], {
      JUDGEFLOW_DATASET_URL: `${base}/ok.csv`,
      JUDGEFLOW_CAB_REFERENCE_URL: `${base}/ref`,
    });
    expect(result.code).toBe(0);
    // The reference harness's prompt files come beside it, at their pinned commits.
    expect(fs.readFileSync(path.join(path.dirname(out), 'reference', 'script.py'), 'utf8')).toContain(
      'def _create_scoring_prompt',
    );
    expect(fs.existsSync(path.join(path.dirname(out), 'reference', 'src', 'prompts', 'citation_check.py'))).toBe(true);
    expect(result.stdout).toContain(`Downloaded ${base}/ok.csv to ${out}`);
    expect(fs.readFileSync(out, 'utf8')).toBe(bodies['/ok.csv']);
    expect((await cliInProcess(['dataset', 'check', out], {})).code).toBe(0);
  });

  test('a file of the wrong shape, or an HTTP error, exits 2 and leaves nothing behind', async () => {
    const dir = tempDir('jf-dataset-');
    const out = path.join(dir, 'dataset.csv');
    const short = await cliInProcess(['dataset', 'fetch', 'cab', '--out', out], {
      JUDGEFLOW_DATASET_URL: `${base}/short.csv`,
      JUDGEFLOW_CAB_REFERENCE_URL: `${base}/ref`,
    });
    expect(short.code).toBe(2);
    expect(short.stderr).toContain(
      `${base}/short.csv does not have the shape of the published CryptoAnalystBench dataset`,
    );
    const missing = await cliInProcess(['dataset', 'fetch', 'cab', '--out', out], {
      JUDGEFLOW_DATASET_URL: `${base}/gone.csv`,
      JUDGEFLOW_CAB_REFERENCE_URL: `${base}/ref`,
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('answered HTTP 404; set JUDGEFLOW_DATASET_URL');
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

test('file:// addresses are read from disk (a copy beside the clone); a missing file names the file and the variable', async () => {
  const src = tempDir('jf-dataset-file-');
  fs.writeFileSync(path.join(src, 'dataset.csv'), bodies['/ok.csv']);
  for (const [file, body] of Object.entries(cabReferenceBodies())) {
    fs.mkdirSync(path.dirname(path.join(src, 'ref', file)), { recursive: true });
    fs.writeFileSync(path.join(src, 'ref', file), body);
  }
  const out = path.join(tempDir('jf-dataset-'), 'dataset.csv');
  const env = {
    JUDGEFLOW_DATASET_URL: `file://${path.join(src, 'dataset.csv')}`,
    JUDGEFLOW_CAB_REFERENCE_URL: `file://${path.join(src, 'ref')}`,
  };
  const result = await cliInProcess(['dataset', 'fetch', 'cab', '--out', out], env);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  expect(fs.readFileSync(out, 'utf8')).toBe(bodies['/ok.csv']);
  expect(fs.readFileSync(path.join(path.dirname(out), 'reference', 'script.py'), 'utf8')).toContain(
    'def _create_scoring_prompt',
  );
  const dir = tempDir('jf-dataset-');
  const missing = await cliInProcess(['dataset', 'fetch', 'cab', '--out', path.join(dir, 'dataset.csv')], {
    ...env,
    JUDGEFLOW_DATASET_URL: `file://${path.join(src, 'gone.csv')}`,
  });
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain(`JUDGEFLOW_DATASET_URL: cannot read ${path.join(src, 'gone.csv')} (ENOENT)`);
  expect(fs.readdirSync(dir)).toEqual([]);
});

test('reference files out of reach: the error says the dataset is in place and names --no-reference, which skips them', async () => {
  const src = tempDir('jf-dataset-file-');
  fs.writeFileSync(path.join(src, 'dataset.csv'), bodies['/ok.csv']);
  const env = {
    JUDGEFLOW_DATASET_URL: `file://${path.join(src, 'dataset.csv')}`,
    JUDGEFLOW_CAB_REFERENCE_URL: `${base}/no-reference-here`,
  };
  const out = path.join(tempDir('jf-dataset-'), 'dataset.csv');
  const failed = await cliInProcess(['dataset', 'fetch', 'cab', '--out', out], env);
  expect(failed.code).toBe(2);
  expect(failed.stderr).toContain(`The dataset itself is in place (${out}, ${cabFixtureRows().length} queries)`);
  expect(failed.stderr).toContain('pass --no-reference');
  const skipped = await cliInProcess(['dataset', 'fetch', 'cab', '--out', out, '--no-reference'], env);
  expect({ code: skipped.code, stderr: skipped.stderr }).toEqual({ code: 0, stderr: '' });
  expect(skipped.stdout).toContain('The reference prompt files were not fetched (--no-reference).');
  expect(fs.existsSync(path.join(path.dirname(out), 'reference'))).toBe(false);
});
