import fs from 'node:fs';
import path from 'node:path';
import { loadRunConfig } from '../../../client/config';
import { latticeProtocol } from '../../../rubrics/lattice';
import {
  blindLabel,
  jointMessages,
  jointSpec,
  planLatticeAhead,
  readyLatticeUnits,
} from '../../../rubrics/lattice/joint';
import { asLatticeQuery, parseLatticeQueries, splitLabel } from '../../../rubrics/lattice/queries';
import { loadLatticeRubric } from '../../../rubrics/lattice/rubric';
import { fromReferenceScores, toReferenceScores } from '../../../rubrics/lattice/scoresFile';
import type { StoredResponse } from '../../../core/model/types';
import { SHARED, tempDir } from '../../support/harness';

const rubric = loadLatticeRubric(latticeProtocol.defaultRubricDir);
const write = (name: string, text: string) => {
  const file = path.join(tempDir(), name);
  fs.writeFileSync(file, text);
  return file;
};
const own = (id: string) => rubric.data.tasks.find((t) => t.id === id)!.name;

describe("the reference's query file, read as it is", () => {
  test('a JSON array of {id, query, task, category}: ids numeric or string, labels by their leading id, the long form kept', () => {
    const file = write(
      'q.json',
      JSON.stringify([
        { id: 0, query: 'What triggers liquidation on Aave v3?', task: `T1 ${own('T1')}`, category: 'C1 Basic' },
        { id: 'x-7', query: 'Should I refuse?', task: 'T16', category: 'C5' },
      ]),
    );
    const queries = parseLatticeQueries(file).map(asLatticeQuery);
    expect(queries.map((q) => [q.id, q.text, q.task, q.category])).toEqual([
      ['0', 'What triggers liquidation on Aave v3?', 'T1', 'C1'],
      ['x-7', 'Should I refuse?', 'T16', 'C5'],
    ]);
    expect(queries[0].reference).toEqual({ id: 0, task: `T1 ${own('T1')}`, category: 'C1 Basic' });
  });

  test('a task named differently from the rubric is a warning naming both, once per label; the same name is none', () => {
    const file = write(
      'q.json',
      JSON.stringify([
        { id: 1, query: 'a', task: 'T3 Deliberately Wrong Name', category: 'C2 Comparative' },
        { id: 2, query: 'b', task: 'T3 Deliberately Wrong Name', category: 'C2 Comparative' },
        { id: 3, query: 'c', task: `T4 ${own('T4')}`, category: 'C2' },
      ]),
    );
    const warnings: string[] = [];
    parseLatticeQueries(file, { rubric, warn: (m) => warnings.push(m) });
    const mine = warnings.filter((w) => w.includes('task'));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toContain('"T3 Deliberately Wrong Name"');
    expect(mine[0]).toContain(`"${own('T3')}"`);
  });

  test('loadRunConfig passes the warning on; an unknown task id is an error naming the record', () => {
    const dir = tempDir();
    fs.writeFileSync(
      path.join(dir, 'q.json'),
      JSON.stringify([{ id: 1, query: 'a', task: 'T2 Not The Name', category: 'C1' }]),
    );
    const config = (queries: string) =>
      `protocol: lattice\nqueries: ${queries}\njudge: { baseURL: "http://127.0.0.1:9/v1", model: m }\ncopilots: [{ name: A, type: openai, baseURL: "http://127.0.0.1:9/v1", model: m }]\n`;
    fs.writeFileSync(path.join(dir, 'c.yaml'), config('q.json'));
    const warnings: string[] = [];
    loadRunConfig(path.join(dir, 'c.yaml'), (m) => warnings.push(m));
    expect(warnings.join('\n')).toMatch(/"T2 Not The Name".*T2 is "/);
    fs.writeFileSync(
      path.join(dir, 'bad.json'),
      JSON.stringify([{ id: 1, query: 'a', task: 'T17 Nothing', category: 'C1' }]),
    );
    fs.writeFileSync(path.join(dir, 'c.yaml'), config('bad.json'));
    expect(() => loadRunConfig(path.join(dir, 'c.yaml'))).toThrow(/bad\.json: item 1: task:/);
  });

  test('a file in neither format is ONE error saying what is expected and how to convert', () => {
    const csv = write(
      'q.csv',
      'id,query,task,category\n' + Array.from({ length: 50 }, (_, i) => `${i},q${i},T1,C1`).join('\n'),
    );
    expect(() => parseLatticeQueries(csv)).toThrow(
      /is not in the expected format: expected JSON Lines .* or a JSON array .*line 1 is not JSON.*looks like a CSV file/s,
    );
    try {
      parseLatticeQueries(csv);
    } catch (error) {
      expect((error as Error).message.split('\n')).toHaveLength(1);
    }
    const pretty = write('q.json', JSON.stringify({ id: 1, text: 'a', task: 'T1', category: 'C1' }, null, 2));
    expect(() => parseLatticeQueries(pretty)).toThrow(/one JSON object spread over several lines/);
    const broken = write('q.json', '[{"id": 1, "query": "a",');
    expect(() => parseLatticeQueries(broken)).toThrow(/starts like a JSON array but is not valid JSON/);
  });

  test('judgeflow JSON Lines still read as before', () => {
    const file = write('q.jsonl', '{"id":"a","text":"t","task":"T2","category":"C3"}\n');
    expect(parseLatticeQueries(file)).toEqual([{ id: 'a', text: 't', task: 'T2', category: 'C3' }]);
  });

  test('labels: "T1 Protocol …" → T1; "C1 Basic" → C1; a bare id keeps no name', () => {
    expect(splitLabel('T16 Scope Boundary Recognition & Safe Refusal')).toEqual({
      id: 'T16',
      name: 'Scope Boundary Recognition & Safe Refusal',
    });
    expect(splitLabel('C1')).toEqual({ id: 'C1', name: '' });
    expect(splitLabel('Basic')).toBeNull();
  });

  const published = path.join(SHARED, 'datasets', 'lattice', 'filtered_queries_240.json');
  (fs.existsSync(published) ? test : test.skip)(
    `the published 240 queries parse: 15 per task, 48 per category${fs.existsSync(published) ? '' : ' [skipped: needs ../shared/datasets/lattice]'}`,
    () => {
      const queries = parseLatticeQueries(published).map(asLatticeQuery);
      expect(queries).toHaveLength(240);
      const count = (key: 'task' | 'category', v: string) => queries.filter((q) => q[key] === v).length;
      for (let t = 1; t <= 16; t++) expect(count('task', `T${t}`)).toBe(15);
      for (let c = 1; c <= 5; c++) expect(count('category', `C${c}`)).toBe(48);
    },
  );
});

describe('joint judging', () => {
  const query = asLatticeQuery({ id: 'q1', text: 'Is staking ETH on Lido safe?', task: 'T10', category: 'C4' });

  test("one message in the reference's layout: [Task], [Category], [Query], [Agent Answers] with [Agent] name:/answer: blocks, labels only", () => {
    const [system, user] = jointMessages(rubric, query, [
      { label: blindLabel(1), text: 'First answer.' },
      { label: blindLabel(2), text: 'Second answer.' },
    ]);
    expect(user.content).toMatch(/^\[Task\]\n<<<\nT10 /);
    expect(user.content).toContain('[Category]\n<<<\nC4 ');
    expect(user.content).toContain('[Query]\n<<<\nIs staking ETH on Lido safe?\n>>>');
    expect(user.content).toContain(
      '[Agent Answers]\n<<<\n[Agent]\nname: agent-1\nanswer:\n<<<\nFirst answer.\n>>>\n\n[Agent]\nname: agent-2\nanswer:\n<<<\nSecond answer.\n>>>\n>>>',
    );
    expect(system.content).toMatch(/each label exactly once/);
    for (const d of rubric.data.dimensions) expect(system.content).toContain(d.id);
  });

  test('a missing, repeated or unknown label is an invalid answer (re-asked), naming what is wrong', () => {
    const spec = jointSpec(['agent-1', 'agent-2'], ['D1'], 0, 10);
    const entry = (agent: string) => ({ agent, dimensions: { D1: { score: 5, reason: 'r' } } });
    expect(spec.check({ results: [entry('agent-1'), entry('agent-2')] })).toBeNull();
    expect(spec.check({ results: [entry('agent-1'), entry('agent-1')] })).toMatch(
      /no entry for agent-2; more than one entry for agent-1/,
    );
    expect(spec.check({ results: [entry('agent-1'), entry('Sorin')] })).toMatch(
      /no entry for agent-2; entries for labels not shown \(Sorin\)/,
    );
    expect(spec.jsonSchema.properties.results.items.properties.agent.enum).toEqual(['agent-1', 'agent-2']);
  });

  test('units: independent one per answer at once; joint one per query once every copilot answered or failed, in the balanced order', () => {
    const response = (copilot: string, status: StoredResponse['status'] = 'ok') =>
      ({ runId: 'r', queryId: 'q1', copilot, status }) as StoredResponse;
    expect(readyLatticeUnits({ query, responses: [response('A')], copilots: ['A', 'B'], plan: undefined })).toEqual([
      { queryId: 'q1', copilots: ['A'] },
    ]);
    const queries = Array.from({ length: 6 }, (_, i) => ({ id: `q${i}`, text: 't', task: 'T1', category: 'C1' }));
    const plan = planLatticeAhead({ queries, copilots: ['A', 'B', 'C'], seed: 's', options: { judging: 'joint' } })!;
    expect(
      planLatticeAhead({ queries, copilots: ['A', 'B'], seed: 's', options: { judging: 'independent' } }),
    ).toBeUndefined();
    const firsts = queries.map((q) => plan.presentation.orders[q.id][0]);
    for (const c of ['A', 'B', 'C']) expect(firsts.filter((f) => f === c)).toHaveLength(2);
    const q1 = { ...query, id: 'q1' };
    expect(
      readyLatticeUnits({ query: q1, responses: [response('A'), response('B')], copilots: ['A', 'B', 'C'], plan }),
    ).toEqual([]);
    const units = readyLatticeUnits({
      query: q1,
      responses: [response('A'), response('B', 'failed'), response('C')],
      copilots: ['A', 'B', 'C'],
      plan,
    });
    expect(units).toEqual([{ queryId: 'q1', copilots: plan.presentation.orders.q1.filter((c) => c !== 'B') }]);
    expect(latticeProtocol.judgeCallsPerQuery(3, { judging: 'joint' })).toBe(1);
    expect(latticeProtocol.judgeCallsPerQuery(3, { judging: 'independent' })).toBe(3);
  });
});

describe("the reference's scores file", () => {
  const queries = [
    {
      id: '0',
      text: 'How does Aave liquidate?',
      task: 'T1',
      category: 'C4',
      reference: { id: 0, task: 'T1 Protocol Mechanism Interpretation', category: 'C4 Decision' },
    },
    { id: 'r', text: 'Help me launder coins', task: 'T16', category: 'C5' },
  ];
  const judgment = (queryId: string, copilot: string, scores: Record<string, number> | null) =>
    ({
      runId: 'r',
      queryId,
      copilot,
      rubricVersion: 'v',
      status: scores ? 'ok' : 'failed',
      scores,
      rationales: scores ? Object.fromEntries(Object.keys(scores).map((k) => [k, `why ${k}`])) : null,
      total: null,
      rank: null,
      position: null,
      error: scores ? null : 'judge gave up',
      judge: { model: 'm', baseURL: 'u', temperature: 0, rubricVersion: 'v' },
      attempts: 1,
      createdAt: '',
    }) as never;
  const ok = (queryId: string, copilot: string) => ({ runId: 'r', queryId, copilot, status: 'ok', text: 'a' }) as never;
  const file = toReferenceScores({
    rubric,
    queries,
    copilots: ['A', 'B'],
    model: 'gpt-x',
    queriesPath: 'q.json',
    instructionsPath: 'i',
    agentFiles: { B: './response/b.json', A: './response/a.json' },
    responses: [ok('0', 'A'), ok('0', 'B'), ok('r', 'A')],
    judgments: [
      judgment('0', 'A', { D1: 8, D2: 7, D3: 3, D4: 9, D5: 6, D6: 5 }),
      judgment('0', 'B', null),
      judgment('r', 'A', { [rubric.data.refusal.id]: 7 }),
    ],
  });

  test('weighted_score = score ÷ 10 × weight, total its sum; T16 is T16-1 × 10; the long labels and qid as the input had them', () => {
    const a = file.results[0].results[0] as any;
    // C4 weights 15, 10, 30, 20, 10, 15: 12 + 7 + 9 + 18 + 6 + 7.5 = 59.5
    expect(a.dimensions.D1).toEqual({ score: 8, weighted_score: 12, reason: 'why D1' });
    expect(a.dimensions.D6.weighted_score).toBe(7.5);
    expect(a.total_score).toBe(59.5);
    expect(file.results[0]).toMatchObject({
      qid: 0,
      task_id: 'T1 Protocol Mechanism Interpretation',
      category: 'C4 Decision',
      query: 'How does Aave liquidate?',
    });
    expect(file.results[1]).toMatchObject({ qid: 'r', task_id: `T16 ${own('T16')}` });
    expect(file.results[1].results[0]).toEqual({
      agent: 'A',
      dimensions: { 'T16-1': { score: 7, weighted_score: 70, reason: `why ${rubric.data.refusal.id}` } },
      total_score: 70,
    });
  });

  test('a failed verdict or a missing answer is {agent, error}; the summary counts them as errors', () => {
    expect(file.results[0].results[1]).toEqual({ agent: 'B', error: 'judge gave up' });
    expect(file.results[1].results[1]).toEqual({ agent: 'B', error: 'missing answer' });
    expect(file.summary).toEqual({
      A: { total_score: 129.5, count: 2, errors: 0, avg_score: 64.75 },
      B: { total_score: 0, count: 0, errors: 2, avg_score: null },
    });
    expect(Object.keys(file)).toEqual([
      'instructions_path',
      'queries_path',
      'agent_files',
      'model',
      'total_scored',
      'summary',
      'results',
    ]);
    expect(Object.keys(file.agent_files)).toEqual(['A', 'B']);
  });

  test('read back: the same verdicts, errors as errors; a query not in the query file is an error naming it', () => {
    const back = fromReferenceScores(JSON.parse(JSON.stringify(file)), 's.json', rubric, queries);
    expect(back.agents).toEqual(['A', 'B']);
    expect(back.verdicts).toContainEqual(expect.objectContaining({ queryId: '0', copilot: 'A', total: 59.5 }));
    expect(back.verdicts).toContainEqual({ queryId: 'r', copilot: 'B', error: 'reference harness: missing answer' });
    expect(() => fromReferenceScores(JSON.parse(JSON.stringify(file)), 's.json', rubric, queries.slice(1))).toThrow(
      /s\.json: results\[0\] \(qid 0\): its query is not in the query file/,
    );
    expect(() => fromReferenceScores({ results: 3 }, 's.json', rubric, queries)).toThrow(
      /expected the LATTICE reference's scores file/,
    );
  });
});
