import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cliInProcess } from '../support/cliInProcess';
import { SHARED, tempDir } from '../support/harness';
import { loadConfiguredRubric } from '../../rubrics';
import { latticeProtocol } from '../../rubrics/lattice';
import { latticeMessages } from '../../rubrics/lattice/judge';
import type { LatticeRubric } from '../../rubrics/lattice/rubric';
import { loadRunConfig } from '../../client/config';

/**
 * The reference repository's paths served from ../shared/datasets/lattice (a byte-for-byte copy of three of its six
 * answer files and the rest), over local HTTP and as file:// — tests never reach a public host.
 */
const LATTICE = path.join(SHARED, 'datasets', 'lattice');
const HAS_SHARED = fs.existsSync(path.join(LATTICE, 'reference', 'judge_instructions_en.txt'));
const REASON = 'needs ../shared/datasets/lattice (CI has it; JUDGEFLOW_TEST_SHARED points elsewhere)';
const maybe = HAS_SHARED ? describe : describe.skip;
if (!HAS_SHARED) console.log(`Skipping judgeflow dataset fetch lattice: ${REASON}`);

/** Repository path → file in the shared copy. */
const REPO_PATHS: Record<string, string> = {
  ...Object.fromEntries(
    ['80', '240', '1200'].map((s) => [`data/query/filtered_queries_${s}.json`, `filtered_queries_${s}.json`]),
  ),
  ...Object.fromEntries(
    ['elsa', 'gina', 'sorin'].map((a) => [
      `data/response/output/1200_queries/filtered_response_${a}.json`,
      `responses/filtered_response_${a}.json`,
    ]),
  ),
  'scoring/prompt/judge_instructions_en.txt': 'reference/judge_instructions_en.txt',
  LICENSE: 'LICENSE',
};

let server: http.Server;
let base: string;
/** Paths the server answers with something else, to test the checks. */
const overrides: Record<string, string> = {};
beforeAll(async () => {
  server = http.createServer((req, res) => {
    const repoPath = decodeURIComponent(req.url!.replace(/^\/pinned\//, ''));
    if (overrides[repoPath] !== undefined) return res.writeHead(200).end(overrides[repoPath]);
    const file = REPO_PATHS[repoPath];
    if (!file || !req.url!.startsWith('/pinned/')) return res.writeHead(404).end('not found');
    res.writeHead(200).end(fs.readFileSync(path.join(LATTICE, file)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pinned`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const same = (a: string, b: string) => expect(fs.readFileSync(a).equals(fs.readFileSync(b))).toBe(true);

maybe('judgeflow dataset fetch lattice', () => {
  test('downloads the 240 queries, the answer files asked for, the judge instructions and the licence, byte for byte', async () => {
    const dir = path.join(tempDir('jf-lattice-'), 'lattice');
    const result = await cliInProcess(
      ['dataset', 'fetch', 'lattice', '--set', '240', '--answers', 'elsa,gina,sorin', '--dir', dir],
      { JUDGEFLOW_LATTICE_DATASET_URL: base },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('filtered_queries_240.json  240 queries');
    expect(result.stdout).toContain(path.join('responses', 'filtered_response_gina.json') + '  1200 answers');
    same(path.join(dir, 'filtered_queries_240.json'), path.join(LATTICE, 'filtered_queries_240.json'));
    for (const a of ['elsa', 'gina', 'sorin'])
      same(
        path.join(dir, 'responses', `filtered_response_${a}.json`),
        path.join(LATTICE, 'responses', `filtered_response_${a}.json`),
      );
    same(path.join(dir, 'judge_instructions_en.txt'), path.join(LATTICE, 'reference', 'judge_instructions_en.txt'));
    same(path.join(dir, 'LICENSE'), path.join(LATTICE, 'LICENSE'));
    expect(fs.readdirSync(path.dirname(dir))).toEqual(['lattice']); // no scratch left beside it
  });

  test('a file:// base works as well as http', async () => {
    const mirror = tempDir('jf-lattice-mirror-');
    for (const [repoPath, file] of Object.entries(REPO_PATHS)) {
      fs.mkdirSync(path.dirname(path.join(mirror, repoPath)), { recursive: true });
      fs.copyFileSync(path.join(LATTICE, file), path.join(mirror, repoPath));
    }
    const dir = path.join(tempDir('jf-lattice-'), 'd');
    const result = await cliInProcess(
      ['dataset', 'fetch', 'lattice', '--set', '80', '--answers', 'none', '--dir', dir, '--json'],
      { JUDGEFLOW_LATTICE_DATASET_URL: pathToFileURL(mirror).href },
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).files.map((f: { content: string }) => f.content)).toEqual([
      '80 queries',
      expect.stringMatching(/bytes$/),
      'MIT',
    ]);
    same(path.join(dir, 'filtered_queries_80.json'), path.join(LATTICE, 'filtered_queries_80.json'));
  });

  test('no network: exit 2, the error says how to place the files by hand, nothing is written', async () => {
    const parent = tempDir('jf-lattice-');
    const dir = path.join(parent, 'lattice');
    const result = await cliInProcess(['dataset', 'fetch', 'lattice', '--dir', dir], {
      JUDGEFLOW_LATTICE_DATASET_URL: 'http://127.0.0.1:1/nothing',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'cannot download data/query/filtered_queries_240.json of the LATTICE reference repository',
    );
    expect(result.stderr).toContain(
      'Without a network, place the files by hand: from a clone of https://github.com/SaharaLabsAI/lattice-benchmark at commit 29cf51ea4d105b315ae3852a63f2260852a1d5ab',
    );
    expect(result.stderr).toContain(
      `scoring/prompt/judge_instructions_en.txt to ${path.join(dir, 'judge_instructions_en.txt')}`,
    );
    expect(fs.readdirSync(parent)).toEqual([]);
  });

  test("a wrong file (instructions that are not the reference's, a published answer file missing) is refused before anything is in place", async () => {
    const dir = path.join(tempDir('jf-lattice-'), 'lattice');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'LICENSE'), 'an earlier copy');
    overrides['scoring/prompt/judge_instructions_en.txt'] = 'You are a helpful assistant.';
    try {
      const wrong = await cliInProcess(['dataset', 'fetch', 'lattice', '--answers', 'none', '--dir', dir], {
        JUDGEFLOW_LATTICE_DATASET_URL: base,
      });
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain(
        `${base}/scoring/prompt/judge_instructions_en.txt: not the LATTICE reference judge instructions`,
      );
    } finally {
      delete overrides['scoring/prompt/judge_instructions_en.txt'];
    }
    const missing = await cliInProcess(['dataset', 'fetch', 'lattice', '--answers', 'surf', '--dir', dir], {
      JUDGEFLOW_LATTICE_DATASET_URL: base,
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('filtered_response_surf.json of the LATTICE reference repository');
    expect(missing.stderr).toContain('HTTP 404');
    expect(fs.readdirSync(dir)).toEqual(['LICENSE']);
    expect(fs.readFileSync(path.join(dir, 'LICENSE'), 'utf8')).toBe('an earlier copy');
    const badSet = await cliInProcess(['dataset', 'fetch', 'lattice', '--set', '300', '--dir', dir], {});
    expect(badSet.code).toBe(2);
    expect(badSet.stderr).toContain('--set 300: the published sets are 80, 240, 1200');
  });

  test('rubric: { from: lattice-reference } judges with the fetched instructions verbatim, answers under a blind label', async () => {
    const dir = path.join(tempDir('jf-lattice-'), 'lattice');
    expect(
      (
        await cliInProcess(['dataset', 'fetch', 'lattice', '--set', '80', '--answers', 'none', '--dir', dir], {
          JUDGEFLOW_LATTICE_DATASET_URL: base,
        })
      ).code,
    ).toBe(0);
    const instructions = fs.readFileSync(path.join(dir, 'judge_instructions_en.txt'), 'utf8');
    const reference = loadConfiguredRubric(latticeProtocol, {
      from: 'lattice-reference',
      file: path.join(dir, 'judge_instructions_en.txt'),
    }) as LatticeRubric;
    const ours = latticeProtocol.loadRubric(latticeProtocol.defaultRubricDir);
    expect(reference.version).not.toBe(ours.version);
    const [system, user] = latticeMessages(
      reference,
      { id: '0', text: 'What threshold actually triggers liquidation on Aave v3?', task: 'T1', category: 'C2' },
      'THE ANSWER',
    );
    expect(system.content).toBe(instructions);
    expect(user.content).toBe(
      '[Task]\n<<<\nT1 Protocol Mechanism Interpretation\n>>>\n\n[Category]\n<<<\nC2 Comparative\n>>>\n\n[Query]\n<<<\nWhat threshold actually triggers liquidation on Aave v3?\n>>>\n\n' +
        '[Agent Answers]\n<<<\n[Agent]\nname: agent-1\nanswer:\n<<<\nTHE ANSWER\n>>>\n>>>',
    );
    // The same version from the same file, and from the content a run stores (a resumed run, rubric diff, rejudge).
    expect(latticeProtocol.rubricFromContent(reference.content, latticeProtocol.defaultRubricDir).version).toBe(
      reference.version,
    );

    // In a run config: the file relative to the config; an unknown name or a missing file is an input error naming it.
    const cfgDir = path.dirname(dir);
    fs.writeFileSync(path.join(cfgDir, 'q.jsonl'), '{"id":"q1","text":"hi","task":"T1","category":"C1"}\n');
    const config = (rubric: string) => {
      const file = path.join(cfgDir, 'run.yaml');
      fs.writeFileSync(
        file,
        `protocol: lattice\nqueries: q.jsonl\nrubric: ${rubric}\ncopilots:\n  - { name: a, type: openai, model: m, baseURL: http://127.0.0.1:9/v1 }\njudge: { model: j, baseURL: http://127.0.0.1:9/v1 }\n`,
      );
      return file;
    };
    expect(
      loadRunConfig(config('{ from: lattice-reference, file: lattice/judge_instructions_en.txt }'), () => {}).rubric,
    ).toEqual({ from: 'lattice-reference', file: path.join(dir, 'judge_instructions_en.txt') });
    expect(() => loadRunConfig(config('{ from: lattice-paper }'), () => {})).toThrow(
      'rubric: { from: lattice-paper } is not a reference rubric of protocol lattice; known: lattice-reference',
    );
    expect(() => loadRunConfig(config('{ from: lattice-reference, file: nowhere.txt }'), () => {})).toThrow(
      `needs the reference judge instructions (judge_instructions_en.txt) at ${path.join(cfgDir, 'nowhere.txt')}, which does not exist; fetch it with judgeflow dataset fetch lattice`,
    );
  });
});

if (!HAS_SHARED) test.skip(`judgeflow dataset fetch lattice [skipped: ${REASON}]`, () => {});
