import fs from 'node:fs';
import path from 'node:path';
import { loadRunConfig, parseRunConfig } from '../../../client/config';
import type { StoredResponse } from '../../../core/model/types';
import { InputError } from '../../../core/model/inputError';
import { protocolFor } from '../../../rubrics';
import { planCabAhead, readyCabUnits } from '../../../rubrics/cab/plan';
import { rankingSpec } from '../../../rubrics/cab/prompts';
import { parseCabQueries, tagsOf } from '../../../rubrics/cab/queries';
import { cabRubricFromContent, loadCabRubric } from '../../../rubrics/cab/rubric';
import { REPO, tempDir } from '../../support/harness';
import {
  cabDatasetFile,
  cabFixtureRows,
  REAL_CAB_DATASET,
  testWithRealCabDataset,
  writeCabFixture,
} from '../../support/cabDataset';
import { cliInProcess } from '../../support/cliInProcess';
import { CAB_DATASET_SHAPE, checkCabDataset } from '../../../rubrics/cab/dataset';

// The published CSV when ../shared has it; else a CAB-shaped fixture (198 rows, the published category counts).
const DATASET = cabDatasetFile(tempDir('jf-cab-dataset-'));
// The published per-category counts (SOURCE.md of the dataset; the real-file test below holds them to the file on CI).
const PUBLISHED_COUNTS = CAB_DATASET_SHAPE.categories;
const RUBRIC_DIR = path.join(REPO, 'rubrics', 'cab');

function write(name: string, text: string): string {
  const file = path.join(tempDir('jf-cabq-'), name);
  fs.writeFileSync(file, text);
  return file;
}

describe('CryptoAnalystBench queries', () => {
  test('the 198-query dataset imports with its 11 categories (the published file, or a CAB-shaped fixture without ../shared)', () => {
    const queries = parseCabQueries(DATASET);
    expect(queries).toHaveLength(198);
    expect(queries[0].id).toBe('q001');
    expect(queries[197].id).toBe('q198');
    const counts: Record<string, number> = {};
    for (const q of queries) for (const t of tagsOf(q)) counts[t] = (counts[t] ?? 0) + 1;
    expect(counts).toEqual(PUBLISHED_COUNTS);
    expect(queries.every((q) => q.text.trim() === q.text && q.text.length > 0)).toBe(true);
    // Same file, same ids: the ids are derived from the row order only.
    expect(parseCabQueries(DATASET).map((q) => q.id)).toEqual(queries.map((q) => q.id));
  });

  testWithRealCabDataset('the published file has the shape judgeflow dataset check expects', async () => {
    expect(checkCabDataset(REAL_CAB_DATASET)).toMatchObject({
      ok: true,
      rows: 198,
      columns: ['query', 'tags'],
      categories: PUBLISHED_COUNTS,
      problems: [],
    });
  });

  test('judgeflow dataset check: the right shape passes; a wrong copy exits 2 saying what differs and where to get the file', async () => {
    const dir = tempDir('jf-cabcheck-');
    const ok = await cliInProcess(['dataset', 'check', writeCabFixture(dir)], {});
    expect(ok).toMatchObject({ code: 0 });
    expect(ok.stdout).toContain('198 queries, 11 categories as published');
    const rows = cabFixtureRows();
    const truncated = await cliInProcess(
      ['dataset', 'check', writeCabFixture(path.join(dir, 'short'), rows.slice(0, 150))],
      {},
    );
    expect(truncated.code).toBe(2);
    expect(truncated.stderr).toContain('150 queries; the published dataset has 198');
    expect(truncated.stderr).toContain('https://github.com/sentient-agi/CryptoAnalystBench');
    expect(truncated.stderr).toContain('data/dataset.csv');
    const relabelled = rows.map((r, i) => (i === 0 ? { ...r, tags: 'Rumours' } : r));
    const wrongTag = await cliInProcess(['dataset', 'check', writeCabFixture(path.join(dir, 'tag'), relabelled)], {});
    expect(wrongTag.code).toBe(2);
    expect(wrongTag.stderr).toMatch(
      /category "Rumours" \(1 queries\) is not one of the 11[\s\S]*"Project & Fundamental Research": 35 queries; the published dataset has 36/,
    );
    const noTags = write('dataset.csv', 'query\nIs BTC up?\n');
    const missingColumn = await cliInProcess(['dataset', 'check', noTags], {});
    expect(missingColumn.code).toBe(2);
    expect(missingColumn.stderr).toContain('missing column "tags"');
    const broken = write(
      'dataset.csv',
      'query,tags\nIs BTC up?,Meme Coins\n"Is ETH up?,Meme Coins\nIs SOL up?,Meme Coins\n',
    );
    const malformed = await cliInProcess(['dataset', 'check', broken], {});
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain(`${broken}:3: malformed CSV`);
  });

  test('JSON Lines with tags, history and context', () => {
    const file = write(
      'q.jsonl',
      [
        JSON.stringify({
          id: 'a',
          text: 'Is ETH cheap?',
          tags: ['Meme Coins', 'NFTs'],
          history: [{ role: 'user', content: 'hi' }],
          context: 'ctx',
        }),
        JSON.stringify({ id: 'b', text: 'Is SOL cheap?', tags: 'Security & Risks' }),
      ].join('\n'),
    );
    const [a, b] = parseCabQueries(file);
    expect(a).toEqual({
      id: 'a',
      text: 'Is ETH cheap?',
      tags: 'Meme Coins\nNFTs',
      history: [{ role: 'user', content: 'hi' }],
      context: 'ctx',
    });
    expect(tagsOf(a)).toEqual(['Meme Coins', 'NFTs']);
    expect(tagsOf(b)).toEqual(['Security & Risks']);
    expect(tagsOf({ id: 'c', text: 'q', tags: '[\'A\', "B"]' })).toEqual(['A', 'B']);
  });

  test('a CSV may carry ids and a shared context; other columns are ignored', () => {
    const file = write(
      'q.csv',
      'id,query,tags,context,sentient_response\nx1,"What is, really, restaking?",Crypto Concepts & How-To,"ctx, quoted",ignored\n',
    );
    expect(parseCabQueries(file)).toEqual([
      { id: 'x1', text: 'What is, really, restaking?', tags: 'Crypto Concepts & How-To', context: 'ctx, quoted' },
    ]);
  });

  test('bad query files fail with what, where and how to fix', () => {
    const fails = (file: string, message: RegExp) => {
      expect(() => parseCabQueries(file)).toThrow(InputError);
      expect(() => parseCabQueries(file)).toThrow(message);
    };
    fails(write('q.csv', 'question,tags\nhi,x\n'), /no "query" column.*query,tags/);
    fails(
      write('q.csv', 'query,tags\nIs BTC up?,x\n,y\nis  btc UP?,z\n'),
      /data row 2: empty "query" cell[\s\S]*data row 3: same query as data row 1/,
    );
    fails(write('q.txt', 'hello'), /must be a \.csv .* or a \.jsonl file/);
    // An unterminated quote would swallow the rows after it into one query: an error naming the line instead.
    const open = write('q.csv', 'query,tags\nIs BTC up?,Meme Coins\n\n"Is ETH up?,Meme Coins\nIs SOL up?,Meme Coins\n');
    fails(
      open,
      new RegExp(`${open}:4: malformed CSV: the record starting on line 4 opens a quoted field that is never closed`),
    );
    fails(write('q.csv', 'query,tags\n"Is BTC up?"x,Meme Coins\n'), /q\.csv:2: malformed CSV/);
    fails(write('q.jsonl', '{"id":"a","text":"x","task":"T1"}\n'), /q\.jsonl:1: .*unknown key\(s\) "task"/);
    fails(write('q.jsonl', '{"id":"a","text":"x"}\n{"id":"a","text":"y"}\n'), /query id "a" appears twice/);
  });

  test('a UTF-8 byte-order mark is skipped in CSV and JSON Lines query files', () => {
    expect(parseCabQueries(write('q.csv', '\ufeffquery,tags\r\nIs BTC up?,Meme Coins\r\n'))).toEqual([
      { id: 'q001', text: 'Is BTC up?', tags: 'Meme Coins' },
    ]);
    expect(parseCabQueries(write('q.jsonl', '\ufeff{"id":"a","text":"Is BTC up?"}\n'))).toEqual([
      { id: 'a', text: 'Is BTC up?' },
    ]);
  });
});

describe('CryptoAnalystBench rubric', () => {
  test('loads, with a content-hash version that a stored copy reproduces', () => {
    const rubric = loadCabRubric(RUBRIC_DIR);
    expect(rubric.version).toMatch(/^[0-9a-f]{12}$/);
    expect(rubric.judge).toEqual({ temperature: 0.1, maxInvalidAnswers: 2 });
    expect(rubric.data.dimensions.map((d) => d.id).sort()).toEqual([
      'data_consistency',
      'depth',
      'relevance',
      'temporal_relevance',
    ]);
    expect(rubric.data.taxonomy).toHaveLength(7);
    const copy = cabRubricFromContent(JSON.parse(JSON.stringify(rubric.content)), '/elsewhere');
    expect(copy.version).toBe(rubric.version);
    expect(copy.prompts).toEqual(rubric.prompts);
    expect(protocolFor('cab').loadRubric(RUBRIC_DIR).version).toBe(rubric.version);
  });

  test('an edited rubric gets a new version; a broken one names the file and the field', () => {
    const dir = tempDir('jf-cabr-');
    for (const f of fs.readdirSync(RUBRIC_DIR).filter((f) => /\.(md|yaml)$/.test(f)))
      fs.copyFileSync(path.join(RUBRIC_DIR, f), path.join(dir, f));
    const original = loadCabRubric(RUBRIC_DIR).version;
    fs.appendFileSync(path.join(dir, 'judge-ranking.md'), '\nBe brief.\n');
    expect(loadCabRubric(dir).version).not.toBe(original);

    const yaml = fs.readFileSync(path.join(dir, 'rubric.yaml'), 'utf8');
    fs.writeFileSync(
      path.join(dir, 'rubric.yaml'),
      yaml.replace('- id: depth', '- id: breadth').replace('temperature: 0.1', 'temperature: 7'),
    );
    const error = (() => {
      try {
        loadCabRubric(dir);
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).toBeInstanceOf(InputError);
    expect(error!.message).toContain(`${path.join(dir, 'rubric.yaml')}: dimensions[2].id: unknown id "breadth"`);
    expect(error!.message).toMatch(/judge\.temperature: /);

    fs.writeFileSync(path.join(dir, 'rubric.yaml'), yaml.replace('scoring: judge-scoring.md', 'scoring: nope.md'));
    expect(() => loadCabRubric(dir)).toThrow(/prompts\.scoring file .*nope\.md cannot be read/);
  });

  test('a ranking must be a permutation of the labels shown', () => {
    const spec = rankingSpec(['Response #1', 'Response #2', 'Response #3']);
    expect(spec.jsonSchema).toMatchObject({
      properties: {
        ranking: { minItems: 3, maxItems: 3, items: { enum: ['Response #1', 'Response #2', 'Response #3'] } },
      },
    });
    expect(spec.check!({ ranking: ['Response #2', 'Response #3', 'Response #1'], rationale: '' })).toBeNull();
    expect(spec.check!({ ranking: ['Response #2', 'Response #2', 'Response #1'], rationale: '' })).toMatch(
      /Response #2 appears more than once and Response #3 is missing/,
    );
    expect(spec.zodSchema.safeParse({ ranking: ['Response #1', 'Response #2'], rationale: '' }).success).toBe(false);
    expect(
      spec.zodSchema.safeParse({ ranking: ['Response #1', 'Response #2', 'Response #9'], rationale: '' }).success,
    ).toBe(false);
  });
});

describe('CryptoAnalystBench plan and config', () => {
  const response = (queryId: string, copilot: string, status: StoredResponse['status'] = 'ok'): StoredResponse => ({
    runId: 'r',
    queryId,
    copilot,
    status,
    text: status === 'ok' ? 'x' : null,
    raw: null,
    html: null,
    adapter: 'openai',
    startedAt: null,
    finishedAt: null,
    latencyMs: null,
    errorKind: null,
    errorMessage: null,
    conversationId: null,
    context: null,
  });

  test('one unit per query with a response, copilots present in presentation order, balanced within one', () => {
    const queries = parseCabQueries(DATASET);
    const systems = ['A', 'B', 'C', 'D'];
    const responses = queries.flatMap((q, i) =>
      systems.map((s) => response(q.id, s, i === 5 && s === 'C' ? 'failed' : 'ok')),
    );
    responses.push(...systems.map((s) => response('ghost', s))); // not in the snapshot: ignored
    const plan = planCabAhead({ queries, copilots: systems, seed: 's1' });
    const unitsOf = (p: unknown) =>
      queries.flatMap((query) =>
        readyCabUnits({
          query,
          responses: responses.filter((r) => r.queryId === query.id),
          copilots: systems,
          plan: p,
        }),
      );
    const units = unitsOf(plan);
    expect(units).toHaveLength(198);
    expect(units[5]).toEqual({ queryId: queries[5].id, copilots: expect.arrayContaining(['A', 'B', 'D']) });
    expect(units[5].copilots).toHaveLength(3);
    for (const u of units.filter((_, i) => i !== 5)) expect([...u.copilots].sort()).toEqual(systems);
    for (const s of systems) {
      const counts = units.filter((_, i) => i !== 5).map((u) => u.copilots.indexOf(s));
      const byPosition = [0, 1, 2, 3].map((p) => counts.filter((c) => c === p).length);
      expect(Math.max(...byPosition) - Math.min(...byPosition)).toBeLessThanOrEqual(1);
    }
    expect(plan.seed).toBe('s1');
    expect(planCabAhead({ queries, copilots: systems, seed: 's1' })).toEqual(plan);
    expect(unitsOf(planCabAhead({ queries, copilots: systems, seed: 's2' }))).not.toEqual(units);
    // A query waits until every copilot has answered it or failed for good.
    expect(
      readyCabUnits({
        query: queries[0],
        responses: responses.filter((r) => r.queryId === queries[0].id && r.copilot !== 'D'),
        copilots: systems,
        plan,
      }),
    ).toEqual([]);
  });

  test('the example config is valid; evaluationDate must be YYYY-MM-DD', () => {
    // The example points where `judgeflow dataset fetch cab` writes from the repository root
    // (datasets/cryptoanalystbench/dataset.csv): lay a dataset out there beside a copy.
    const root = tempDir('jf-cab-example-');
    fs.mkdirSync(path.join(root, 'repo', 'examples'), { recursive: true });
    fs.copyFileSync(path.join(REPO, 'examples', 'cab-demo.yaml'), path.join(root, 'repo', 'examples', 'cab-demo.yaml'));
    fs.mkdirSync(path.join(root, 'repo', 'datasets', 'cryptoanalystbench'), { recursive: true });
    fs.copyFileSync(DATASET, path.join(root, 'repo', 'datasets', 'cryptoanalystbench', 'dataset.csv'));
    const config = loadRunConfig(path.join(root, 'repo', 'examples', 'cab-demo.yaml'));
    expect(config.protocol).toBe('cab');
    expect(config.cab).toEqual({ evaluationDate: '2026-03-05', errorTaxonomy: true, answerTimestamps: false });
    const base = {
      protocol: 'cab',
      queries: DATASET,
      judge: { baseURL: 'http://127.0.0.1:1/v1', model: 'j' },
      copilots: [{ name: 'A', type: 'openai', baseURL: 'http://127.0.0.1:1/v1', model: 'm' }],
    };
    expect(() => parseRunConfig({ ...base, cab: { evaluationDate: '5 March 2026' } }, 'cfg.yaml', '/')).toThrow(
      /cfg\.yaml: cab\.evaluationDate: use YYYY-MM-DD/,
    );
    for (const impossible of ['2026-13-45', '2026-02-30', '2025-02-29', '2026-04-31', '2026-00-10', '2026-01-00'])
      expect(() => parseRunConfig({ ...base, cab: { evaluationDate: impossible } }, 'cfg.yaml', '/')).toThrow(
        new RegExp(
          `cfg\\.yaml: cab\\.evaluationDate: evaluationDate ${impossible} is not a real calendar date; use YYYY-MM-DD`,
        ),
      );
    expect(parseRunConfig({ ...base, cab: { evaluationDate: '2024-02-29' } }, 'cfg.yaml', '/').cab).toEqual({
      evaluationDate: '2024-02-29',
      errorTaxonomy: false,
      answerTimestamps: false,
    });
    // Configs written before the `cab:` section keep working: top-level CryptoAnalystBench keys move into it.
    expect(parseRunConfig({ ...base, evaluationDate: '2026-12-31', errorTaxonomy: true }, 'cfg.yaml', '/').cab).toEqual(
      { evaluationDate: '2026-12-31', errorTaxonomy: true, answerTimestamps: false },
    );
    expect(() => parseRunConfig({ ...base, evaluationDate: '5 March 2026' }, 'cfg.yaml', '/')).toThrow(
      /cfg\.yaml: cab\.evaluationDate: use YYYY-MM-DD/,
    );
    // The shared schema stays strict: a protocol's keys are not accepted for another protocol.
    expect(() =>
      parseRunConfig({ ...base, protocol: 'lattice', evaluationDate: '2026-12-31' }, 'cfg.yaml', '/'),
    ).toThrow(/unrecognized key|evaluationDate/i);
    expect(() =>
      parseRunConfig({ ...base, protocol: 'lattice', cab: { errorTaxonomy: true } }, 'cfg.yaml', '/'),
    ).toThrow(/cfg\.yaml: cab: options of protocol "cab", but this config runs protocol "lattice"/);
  });
});
