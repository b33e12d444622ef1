import fs from 'node:fs';
import path from 'node:path';
import { latticeScore, summariseLattice } from '../../../rubrics/lattice/aggregate';
import { loadLatticeRubric } from '../../../rubrics/lattice/rubric';
import { latticeProtocol } from '../../../rubrics/lattice';
import { loadRunConfig } from '../../../client/config';
import type { StoredResponse } from '../../../core/model/types';
import { allDimensions, latticeJudgment } from '../../support/latticeJudgment';
import { tempDir } from '../../support/harness';

const rubric = loadLatticeRubric(latticeProtocol.defaultRubricDir);

describe('LATTICE scoring, checked by hand', () => {
  test('C4 weights: 15·8 + 10·6 + 30·4 + 20·7 + 10·5 + 15·9 = 625 → 62.5', () => {
    expect(
      latticeScore(rubric.data, { task: 'T11', category: 'C4' }, { D1: 8, D2: 6, D3: 4, D4: 7, D5: 5, D6: 9 }),
    ).toBe(62.5);
  });
  test('C1 weights: 15·10 + 25·10 + 15·0 + 15·0 + 15·10 + 15·10 = 700 → 70', () => {
    expect(
      latticeScore(rubric.data, { task: 'T1', category: 'C1' }, { D1: 10, D2: 10, D3: 0, D4: 0, D5: 10, D6: 10 }),
    ).toBe(70);
  });
  test('T16 is Refusal × 10 whatever the category', () => {
    expect(latticeScore(rubric.data, { task: 'T16', category: 'C5' }, { Refusal: 7 })).toBe(70);
  });

  test('summary: means over judged items, failures counted as missing data, Refusal only over T16', () => {
    const queries = [
      { id: 'a', text: 'a', task: 'T1', category: 'C1' },
      { id: 'b', text: 'b', task: 'T1', category: 'C4' },
      { id: 'c', text: 'c', task: 'T16', category: 'C2' },
      { id: 'd', text: 'd', task: 'T2', category: 'C1' },
    ];
    const j = (queryId: string, scores: Record<string, number> | null, total: number | null) =>
      latticeJudgment(queryId, 'X', scores, total);
    const all = allDimensions;
    const judgments = [j('a', all(8), 80), j('b', all(6), 60), j('c', { Refusal: 3 }, 30), j('d', null, null)];
    const responses = ['a', 'b', 'c', 'd'].map(
      (queryId) => ({ runId: 'r', queryId, copilot: 'X', status: 'ok' }) as StoredResponse,
    );
    const s = summariseLattice(rubric.data, queries, ['X'], responses, judgments).X;
    expect(s.score).toBeCloseTo((80 + 60 + 30) / 3, 12);
    expect(s.n).toBe(3);
    expect(s.failed).toBe(1);
    expect(s.failedJudgments).toBe(1);
    expect(s.dimensions.D1).toBe(7);
    expect(s.dimensions.Refusal).toBe(3);
    expect(s.tasks.T1).toBe(70);
    expect(s.tasks.T2).toBeNull(); // its only judgment failed: no default score
    expect(s.categories.C1).toBe(80);
    expect(s.categories.C2).toBe(30);
  });
});

describe('validation errors name the file and the field', () => {
  function brokenRubric(edit: (yaml: string) => string): string {
    const dir = tempDir();
    for (const f of fs.readdirSync(latticeProtocol.defaultRubricDir))
      if (/\.(ya?ml|md)$/.test(f)) fs.copyFileSync(path.join(latticeProtocol.defaultRubricDir, f), path.join(dir, f));
    fs.writeFileSync(path.join(dir, 'rubric.yaml'), edit(fs.readFileSync(path.join(dir, 'rubric.yaml'), 'utf8')));
    return dir;
  }
  test('a weight row that does not sum to 100', () => {
    const dir = brokenRubric((y) => y.replace('C3: { D1: 20', 'C3: { D1: 25'));
    expect(() => loadLatticeRubric(dir)).toThrow(
      `${path.join(dir, 'rubric.yaml')}: weights.C3: weights sum to 105, must sum to 100`,
    );
  });
  test('an unknown category in the weights and a misnumbered task', () => {
    const dir = brokenRubric((y) => y.replace('  C5: { D1: 25', '  C9: { D1: 25').replace('{ id: T7,', '{ id: T77,'));
    expect(() => loadLatticeRubric(dir)).toThrow(
      /tasks\[6\]\.id: expected "T7", found "T77"[\s\S]*weights\.C9: unknown category "C9"[\s\S]*weights\.C5: missing weight row/,
    );
  });
  test('a missing prompt file', () => {
    const dir = brokenRubric((y) => y.replace('system: judge-system.md', 'system: nope.md'));
    expect(() => loadLatticeRubric(dir)).toThrow(/prompts\.system file .*nope\.md cannot be read/);
  });

  test('a judge prompt that drops {{response}} or uses an unknown placeholder fails when the rubric loads', () => {
    const dir = brokenRubric((y) => y);
    fs.writeFileSync(path.join(dir, 'judge-user.md'), 'Query: {{query}}\nGrade it on {{dimension_ids}}.');
    expect(() => latticeProtocol.loadRubric(dir)).toThrow(/judge-user\.md: the prompt must contain \{\{response\}\}/);
    fs.writeFileSync(path.join(dir, 'judge-user.md'), '{{query}} {{response}} {{colour}}');
    expect(() => latticeProtocol.loadRubric(dir)).toThrow(/unknown placeholder \{\{colour\}\}/);
  });

  function config(text: string, queries = '{"id":"q1","text":"hi","task":"T1","category":"C1"}\n'): string {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'q.jsonl'), queries);
    fs.writeFileSync(path.join(dir, 'config.yaml'), text);
    return path.join(dir, 'config.yaml');
  }
  const good =
    'protocol: lattice\nqueries: q.jsonl\njudge: { baseURL: http://127.0.0.1:8000/v1, model: j }\ncopilots:\n  - { name: Sorin, type: openai, baseURL: http://127.0.0.1:8001/v1, model: sorin }\n';
  test('a valid config loads with defaults and absolute paths', () => {
    const file = config(good);
    const c = loadRunConfig(file);
    expect(c.queries).toBe(path.join(path.dirname(file), 'q.jsonl'));
    expect(c.judge!.responseFormat).toBeUndefined(); // the provider profile decides (core/providers)
    expect(c.copilots[0]).toMatchObject({ concurrency: 4, timeoutMs: 120000 });
  });
  test('unknown keys and bad values name their path', () => {
    const file = config(
      good.replace('model: sorin }', 'model: sorin, colour: red }').replace('model: j }', 'model: j, temperature: 7 }'),
    );
    let message = '';
    try {
      loadRunConfig(file);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(`${file}: judge.temperature`);
    expect(message).toMatch(/copilots\[0\].*"colour"/);
  });
  test('a bad query line is reported with its line number', () => {
    const file = config(
      good,
      '{"id":"q1","text":"hi","task":"T1","category":"C1"}\n{"id":"q2","text":"x","task":"T17","category":"C1"}\nnot json\n',
    );
    expect(() => loadRunConfig(file)).toThrow(/q\.jsonl:2: task: [\s\S]*q\.jsonl:3: not valid JSON/);
  });
  test('secrets are named by environment variable, never written into the config', () => {
    expect(() =>
      loadRunConfig(config(good.replace('model: sorin }', 'model: sorin, apiKeyEnv: "sk-live-abc123" }'))),
    ).toThrow(/copilots\[0\]\.apiKeyEnv: must be the NAME of an environment variable/);
    const literal =
      good +
      '  - { name: Api, type: http, url: http://127.0.0.1:9/ask, headers: { Authorization: "Bearer sk-live-abc123" }, answerPath: a }\n';
    expect(() => loadRunConfig(config(literal))).toThrow(
      /copilots\[1\]\.headers\.Authorization: put the credential in an environment variable/,
    );
    expect(() => loadRunConfig(config(literal.replace('Bearer sk-live-abc123', 'Bearer ${API_KEY}')))).not.toThrow();
  });

  test('duplicate copilot names and query ids', () => {
    expect(() =>
      loadRunConfig(config(good + '  - { name: Sorin, type: openai, baseURL: http://127.0.0.1:8001/v1, model: x }\n')),
    ).toThrow(/copilots\[1\]\.name: duplicate copilot name "Sorin"/);
    expect(() =>
      loadRunConfig(
        config(
          good,
          '{"id":"q1","text":"a","task":"T1","category":"C1"}\n{"id":"q1","text":"b","task":"T1","category":"C1"}\n',
        ),
      ),
    ).toThrow(/query id "q1" appears twice/);
  });
});
