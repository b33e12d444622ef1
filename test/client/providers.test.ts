import { cliInProcess } from '../support/cliInProcess';
import { runConfig, tempDir } from '../support/harness';
import { dryRunPlan, describeDryRun } from '../../client/dryRun';
import { samplesWarnings } from '../../client/config';
import { curateInput } from '../../client/snapshotOptions';
import { PROVIDER_IDS } from '../../core/llm/providers';
import { InputError } from '../../core/model/inputError';

const queries = [{ id: 't1-c1', text: 'Should I stake ETH?', task: 'T1', category: 'C1' }];

test('judgeflow providers lists every profile and what it sends', async () => {
  const out = await cliInProcess(['providers'], {});
  expect(out.code).toBe(0);
  for (const id of PROVIDER_IDS) expect(out.stdout).toContain(`${id} — `);
  expect(out.stdout).toMatch(/mistral — [^\n]*\n[^\n]*\n\s+sends: seed as random_seed; token cap as max_tokens/);
  const json = JSON.parse((await cliInProcess(['providers', '--json'], {})).stdout);
  expect(json.find((p: any) => p.id === 'deepseek')).toMatchObject({
    responseFormat: 'json_object',
    schemaEnforced: false,
    seedParam: null,
  });
});

test('run --dry-run shows the parameters each endpoint will get, by its provider', () => {
  const cfg = runConfig(tempDir(), {
    protocol: 'lattice',
    queries,
    judge: { baseURL: 'https://api.mistral.ai/v1', model: 'mistral-large-latest', maxTokens: 800 },
    copilots: [
      {
        name: 'Gem',
        type: 'openai',
        baseURL: 'https://generativelanguage.googleapis.com/v1beta/openai',
        model: 'gemini-2.5-flash',
        temperature: 0.2,
      },
      {
        name: 'O3',
        type: 'openai',
        baseURL: 'https://api.openai.com/v1',
        model: 'o3',
        temperature: 0,
        maxTokens: 500,
        extraBody: { reasoning_effort: 'low' },
      },
    ],
  });
  const plan = dryRunPlan(cfg);
  expect(plan.parameters).toEqual([
    {
      who: 'judge',
      provider: 'mistral',
      parameters: {
        temperature: 0,
        max_tokens: 800,
        random_seed: '<derived from the run seed>',
        response_format: 'json_schema (strict: true)',
      },
      schemaInPrompt: false,
    },
    { who: 'copilot Gem', provider: 'gemini', parameters: { temperature: 0.2 }, schemaInPrompt: false },
    {
      who: 'copilot O3',
      provider: 'openai',
      parameters: { max_completion_tokens: 500, seed: '<derived from the run seed>', reasoning_effort: 'low' },
      schemaInPrompt: false,
    },
  ]);
  expect(describeDryRun(plan)).toContain(
    'judge [provider mistral]: temperature=0, max_tokens=800, random_seed=<derived from the run seed>',
  );
});

test('samples at temperature 0 against a provider that ignores seed warn; with a seed or a temperature they do not', () => {
  const judge = (fields: Record<string, unknown>) =>
    ({ judge: { baseURL: 'https://api.deepseek.com', model: 'deepseek-chat', samples: 5, ...fields } }) as never;
  expect(samplesWarnings(judge({}), 0)).toEqual([
    expect.stringMatching(/5 samples at temperature 0 from provider deepseek.*near-identical/),
  ]);
  expect(samplesWarnings(judge({ temperature: 0.7 }), 0)).toEqual([]);
  expect(samplesWarnings(judge({ baseURL: 'https://api.openai.com/v1' }), 0)).toEqual([]);
  expect(samplesWarnings(judge({ samples: 1 }), 0)).toEqual([]);
});

test("curation batches whose tagging enum exceeds strict mode's 1,000 values exit 2 at load", () => {
  const values = { 'batch-size': '91', 'base-url': 'https://api.openai.com/v1' };
  expect(() => curateInput(values, 'traffic.jsonl')).toThrow(InputError);
  expect(() => curateInput(values, 'traffic.jsonl')).toThrow(
    /91 × 11 categories = 1001 enum values.*use --batch-size 90 or fewer/,
  );
  expect(curateInput({ ...values, 'batch-size': '90' }, 'traffic.jsonl').batchSize).toBe(90);
  expect(curateInput({ ...values, provider: 'deepseek' }, 'traffic.jsonl').llm).toMatchObject({
    provider: 'deepseek',
    responseFormat: 'json_object',
  });
});
