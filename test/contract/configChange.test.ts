import { compareRunConfigs, describeLimitChange } from '../../contract/configChange';

const base = {
  protocol: 'lattice',
  queries: '/q.jsonl',
  rubric: undefined,
  seed: 'judgeflow',
  judge: { baseURL: 'http://j/v1', model: 'sim-judge', concurrency: 4, samples: 1, temperature: 0 },
  copilots: [
    { name: 'Good', type: 'openai', baseURL: 'http://c/v1', model: 'sim-terse', concurrency: 1 },
    { name: 'MyAPI', type: 'http', url: 'http://c/chat', answerPath: 'data.text', concurrency: 1 },
  ],
  lattice: { tasks: ['T1'] },
};
const withCopilot = (i: number, over: Record<string, unknown>) => ({
  ...base,
  copilots: base.copilots.map((c, j) => (j === i ? { ...c, ...over } : c)),
});

test('endpoint settings, pricing, budget and failFast may change; each change is named, with the endpoints it touches', () => {
  const next = {
    ...withCopilot(1, { answerPath: 'choices[0].message.content', headers: { 'x-key': '${MY_KEY}' } }),
    judge: { ...base.judge, baseURL: 'http://j2/v1', timeoutMs: 5000 },
    pricing: { x: { inputPerMTok: 1, outputPerMTok: 1 } },
    failFast: false,
  };
  expect(compareRunConfigs(base, next)).toEqual({
    changed: [
      'copilot MyAPI answerPath',
      'copilot MyAPI headers',
      'failFast',
      'the judge baseURL',
      'the judge timeoutMs',
      'pricing',
    ],
    refused: [],
    endpoints: ['copilot:MyAPI', 'judge'],
  });
  // What the stored record adds, and keys set to undefined, are no change.
  expect(
    compareRunConfigs(
      { ...base, simulated: true, reuseJudgments: false },
      { ...base, simulated: false, rubric: undefined },
    ),
  ).toEqual({ changed: [], refused: [], endpoints: [] });
});

test('anything that changes what is asked or how it is judged is refused, naming the key', () => {
  expect(compareRunConfigs(base, { ...base, rubric: '/other-rubric' }).refused).toEqual(['rubric']);
  expect(compareRunConfigs(base, { ...base, queries: '/other.jsonl', seed: 's' }).refused).toEqual(['queries', 'seed']);
  expect(compareRunConfigs(base, { ...base, lattice: { tasks: ['T2'] } }).refused).toEqual(['lattice']);
  expect(compareRunConfigs(base, { ...base, judge: { ...base.judge, samples: 3, temperature: 0.7 } }).refused).toEqual([
    'judge.samples',
    'judge.temperature',
  ]);
  expect(compareRunConfigs(base, withCopilot(1, { type: 'openai' })).refused).toEqual(['copilots[1].type']);
  expect(compareRunConfigs(base, { ...base, copilots: [...base.copilots].reverse() }).refused).toEqual([
    'copilots (the set and order of copilot names: Good, MyAPI)',
  ]);
  const panel = {
    ...base,
    judge: undefined,
    judges: [
      { name: 'a', baseURL: 'http://a/v1', model: 'm' },
      { name: 'b', baseURL: 'http://b/v1', model: 'm' },
    ],
  };
  expect(compareRunConfigs(panel, { ...panel, judges: [panel.judges[0]] }).refused).toEqual([
    'judges (the set and order of panel members: a, b)',
  ]);
  expect(
    compareRunConfigs(panel, { ...panel, judges: [panel.judges[0], { ...panel.judges[1], baseURL: 'http://c/v1' }] }),
  ).toMatchObject({ changed: ['judge b baseURL'], endpoints: ['judge:1'] });
  expect(compareRunConfigs(base, panel).refused).toEqual(['judge', 'judges']);
  // Who judges is what is judged: verdicts by two models under one rubric version would read as one judge's.
  expect(compareRunConfigs(base, { ...base, judge: { ...base.judge, model: 'other-judge' } }).refused).toEqual([
    'judge.model (the model that gives the verdicts: sim-judge)',
  ]);
  expect(
    compareRunConfigs(panel, { ...panel, judges: [panel.judges[0], { ...panel.judges[1], model: 'm2' }] }).refused,
  ).toEqual(['judges[1].model (the model that gives the verdicts: m)']);
});

test('a limit change reads old → new', () => {
  expect(describeLimitChange({ endpoint: 'copilot MyAPI', limit: 'concurrency', from: 4, to: 2 })).toBe(
    'copilot MyAPI concurrency 4 → 2',
  );
  expect(describeLimitChange({ endpoint: 'the judge', limit: 'requestsPerMinute', from: null, to: 60 })).toBe(
    'the judge requestsPerMinute unset → 60',
  );
});
