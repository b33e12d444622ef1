import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  buildCabReferenceRubric,
  cabReferencePrompts,
  CAB_REFERENCE_FILES,
  fetchCabReference,
} from '../../../rubrics/cab/reference';
import { scoringMessage, systemMessage, taxonomyMessages } from '../../../rubrics/cab/prompts';
import { SHARED, tempDir } from '../../support/harness';
import { cabReferenceBodies } from '../../support/cabReferenceFixture';

let server: http.Server;
let base: string;
const bodies = cabReferenceBodies();
beforeAll(async () => {
  server = http.createServer((req, res) =>
    bodies[req.url!] ? res.writeHead(200).end(bodies[req.url!]) : res.writeHead(404).end('not found'),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

test('the reference files are fetched at their pinned commits (base-URL override) and the rubric is built from the prompt strings in them', async () => {
  const dir = tempDir('jf-cab-ref-');
  const got = await fetchCabReference(dir, { JUDGEFLOW_CAB_REFERENCE_URL: base });
  expect(got.map((g) => g.url)).toEqual(Object.entries(CAB_REFERENCE_FILES).map(([f, c]) => `${base}/${c}/${f}`));
  const rubric = buildCabReferenceRubric(path.join(dir, 'script.py'));
  const query = { id: 'q1', text: 'Is ETH staking worth it?' };
  const turn = scoringMessage(
    rubric,
    query,
    { label: 'Response #2', text: 'Yes, with care.', timestamp: null, context: 'ETH APR: 3%' },
    '2026-03-05',
  ).content;
  // f-string fields became judgeflow's values; escaped braces became plain ones; the docstring was skipped.
  expect(turn).toContain('Fixture scoring turn for item #2.');
  expect(turn).toContain('FIXTURE DATE: 2026-03-05');
  expect(turn).toContain('FIXTURE QUERY: Is ETH staking worth it?');
  expect(turn).toContain('FIXTURE CONTEXT START\nETH APR: 3%\nFIXTURE CONTEXT END');
  expect(turn).toContain('FIXTURE ITEM #2: Yes, with care.');
  expect(turn).toContain('Reply as {\n    "temporal_relevance": {"score"');
  expect(turn).not.toContain('Docstring');
  expect(systemMessage(rubric, '2026-03-05').content).toBe('Fixture system prompt, dated 2026-03-05.');
  const tax = taxonomyMessages(rubric, query, { text: 'Yes.', timestamp: null, context: null }, '2026-03-05');
  expect(tax[0].content).toBe('Fixture taxonomy system prompt.');
  expect(tax[1].content).toContain('Fixture taxonomy check, 2026-03-05.');
  // A new rubric version of its own, recording where the texts came from.
  expect((rubric.content as any).reference.files['script.py']).toBe(CAB_REFERENCE_FILES['script.py']);
});

test('a wrong download is refused before anything is written; an unknown f-string field is named', async () => {
  const dir = tempDir('jf-cab-ref-bad-');
  await expect(fetchCabReference(dir, { JUDGEFLOW_CAB_REFERENCE_URL: `${base}/nowhere` })).rejects.toThrow(
    /answered HTTP 404; set JUDGEFLOW_CAB_REFERENCE_URL/,
  );
  expect(fs.readdirSync(dir)).toEqual([]);
  const odd = bodies[`/${CAB_REFERENCE_FILES['script.py']}/script.py`].replace('{query}', '{user_question}');
  expect(() =>
    cabReferencePrompts(
      odd,
      bodies[`/${CAB_REFERENCE_FILES['run_error_taxonomy.py']}/run_error_taxonomy.py`],
      'x/script.py',
    ),
  ).toThrow(/field \{user_question\} judgeflow does not know how to fill/);
  expect(() => buildCabReferenceRubric(path.join(dir, 'script.py'))).toThrow(/run judgeflow dataset fetch cab/);
});

// The real files, when a copy sits beside the shared dataset (fetched once by hand: judgeflow dataset fetch cab).
const REAL = path.join(SHARED, 'datasets', 'cryptoanalystbench', 'reference', 'script.py');
(fs.existsSync(REAL) ? test : test.skip)(
  `the real script.py and run_error_taxonomy.py build a rubric${fs.existsSync(REAL) ? '' : ' [skipped: no reference/script.py beside ../shared/datasets/cryptoanalystbench; tests never reach the public host]'}`,
  () => {
    const rubric = buildCabReferenceRubric(REAL);
    const turn = scoringMessage(
      rubric,
      { id: 'q', text: 'QUERY-X' },
      { label: 'Response #1', text: 'ANSWER-Y', timestamp: null, context: null },
      '2026-03-05',
    ).content;
    expect(turn).toContain('QUERY-X');
    expect(turn).toContain('ANSWER-Y');
    expect(turn).toContain('2026-03-05');
  },
);

test('rubric: { from: cab-reference } in a run config judges with the rubric built from the fetched files', async () => {
  const { parseRunConfig } = await import('../../../client/config');
  const { loadConfiguredRubric, protocolFor } = await import('../../../rubrics');
  const dir = tempDir('jf-cab-ref-config-');
  await fetchCabReference(dir, { JUDGEFLOW_CAB_REFERENCE_URL: base });
  const queries = path.join(dir, 'queries.jsonl');
  fs.writeFileSync(queries, JSON.stringify({ id: 'q1', text: 'Is ETH staking worth it?' }) + '\n');
  const config = parseRunConfig(
    {
      protocol: 'cab',
      queries,
      rubric: { from: 'cab-reference', file: path.join(dir, 'script.py') },
      judge: { baseURL: 'http://127.0.0.1:9/v1', model: 'j' },
      copilots: [{ name: 'A', type: 'openai', baseURL: 'http://127.0.0.1:9/v1', model: 'm' }],
    },
    'test config',
    dir,
  );
  const cab = protocolFor('cab');
  const rubric = loadConfiguredRubric(cab, config.rubric);
  expect(rubric.version).toBe(buildCabReferenceRubric(path.join(dir, 'script.py')).version);
  expect(rubric.version).not.toBe(cab.loadRubric(cab.defaultRubricDir).version);
  expect(() => loadConfiguredRubric(cab, { from: 'cab-reference', file: path.join(dir, 'absent.py') })).toThrow(
    /judgeflow dataset fetch cab/,
  );
});
