import { benchmarkRun } from '../../workflows';
import { runInput } from '../../client/startRun';
import { latticeGrid, runConfig, tempDir, withWorker } from '../support/harness';
import {
  decodedHistory,
  gradedText,
  scriptedLatticeJudge,
  scriptedLatticeToolJudge,
  scriptedScore,
} from '../support/judges';
import { simServersForFile } from '../support/sims';

/**
 * Anthropic's native Messages API in whole LATTICE runs, played by the simulator's strict /v1/messages: an `anthropic`
 * copilot, and a judge with `provider: anthropic` (structured answers by a forced tool call). Every response judged,
 * every stored score the judge's own answer, the key only in the worker's environment.
 */
/** CAB's first scoring turn of REFUSED is refused once (stop_reason refusal, no content), as a real Claude judge may. */
const REFUSED = 'Which memecoin will 100x next week?';
const refusedOnce = new Set<string>();
const refusingCabJudge = (body: any) => {
  const first =
    body.tool_choice?.name === 'cab_scores' &&
    JSON.stringify(body.messages).includes(REFUSED) &&
    body.messages.length === 1;
  if (!first || refusedOnce.has(REFUSED)) return undefined;
  refusedOnce.add(REFUSED);
  return {
    body: JSON.stringify({
      id: 'msg_refused',
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: [],
      stop_reason: 'refusal',
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 0 },
    }),
  };
};
const sim = simServersForFile({
  openaiJudge: { handler: scriptedLatticeJudge },
  anthropicJudge: { handler: scriptedLatticeToolJudge },
  cabJudge: { handler: refusingCabJudge },
  copilots: {},
});
const KEY = 'sk-ant-canary-51c9e2';
const queries = latticeGrid(16, 5).filter((q) => ['t1-c1', 't2-c3', 't16-c2'].includes(q.id as string));
queries[0].history = [
  { role: 'user', content: 'I hold 2 ETH.' },
  { role: 'assistant', content: '' }, // an empty earlier answer: sent as a placeholder, which the Messages API accepts
];
const copilots = () => [
  {
    name: 'Claude',
    type: 'anthropic',
    baseURL: sim.copilots.url,
    model: 'claude-sim-copilot',
    system: 'You are a crypto analyst.',
  },
  { name: 'Terse', type: 'openai', baseURL: sim.copilots.url, model: 'sim-terse' },
];

async function runAndCheck(
  name: string,
  judge: Record<string, unknown>,
  judgeSim: { requests: Array<{ path: string; headers: Record<string, string | undefined> }> },
) {
  const env = { ...process.env, ANTHROPIC_API_KEY: KEY };
  await withWorker(
    name,
    async ({ client, taskQueue, store }) => {
      const before = { judge: judgeSim.requests.length, copilots: sim.copilots.requests.length };
      const runId = `run-${name}-${Date.now()}`;
      const handle = await client.workflow.start(benchmarkRun, {
        taskQueue,
        workflowId: runId,
        args: [runInput(runConfig(tempDir(), { protocol: 'lattice', queries, judge, copilots: copilots() }), runId)],
      });
      await handle.result();

      const claudeCalls = sim.copilots.requests.slice(before.copilots).filter((r) => r.path === '/v1/messages');
      expect(claudeCalls).toHaveLength(queries.length);
      for (const call of claudeCalls)
        expect([call.headers['x-api-key'], call.headers['anthropic-version'], call.body.system]).toEqual([
          KEY,
          '2023-06-01',
          'You are a crypto analyst.',
        ]);
      const responses = await store.responses(runId);
      expect(responses.map((r) => [r.copilot, r.status]).sort()).toEqual(
        queries
          .flatMap(() => [
            ['Claude', 'ok'],
            ['Terse', 'ok'],
          ])
          .sort(),
      );

      // Every response judged, and every stored score is what the judge answered for that response's text.
      const judgments = await store.judgments(runId);
      expect(judgments).toHaveLength(queries.length * 2);
      const textOf = new Map(responses.map((r) => [`${r.queryId}/${r.copilot}`, r.text!]));
      for (const j of judgments) {
        expect({ status: j.status, error: j.error }).toEqual({ status: 'ok', error: null });
        const text = textOf.get(`${j.queryId}/${j.copilot}`)!;
        for (const [dim, score] of Object.entries(j.scores!)) expect(score).toBe(scriptedScore(text, dim));
      }
      expect(judgeSim.requests.length - before.judge).toBe(judgments.length);

      const history = decodedHistory(await handle.fetchHistory());
      expect(history).toContain('ANTHROPIC_API_KEY');
      expect(history).not.toContain(KEY);
    },
    env,
  );
}

test('an anthropic copilot in a LATTICE run: history as alternating turns, every answer judged, no key in the history', async () => {
  await runAndCheck('anthropic-copilot', { baseURL: sim.openaiJudge.url, model: 'judge-model-x' }, sim.openaiJudge);
  const withHistory = sim.copilots.requests.find(
    (r) => r.path === '/v1/messages' && JSON.stringify(r.body.messages).includes('I hold 2 ETH.'),
  )!;
  expect(withHistory.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
}, 120_000);

// Needs the judge-side dispatch (`provider: anthropic` reaching anthropicChat) from the providers branch.
test("an anthropic judge (provider: anthropic) and an anthropic copilot: judgments by forced tool call, each the judge's answer", async () => {
  await runAndCheck(
    'anthropic-judge',
    {
      provider: 'anthropic',
      baseURL: sim.anthropicJudge.url,
      model: 'claude-sim-judge',
      apiKeyEnv: 'ANTHROPIC_API_KEY',
      maxTokens: 2000,
    },
    sim.anthropicJudge,
  );
  const judged = sim.anthropicJudge.requests;
  expect(judged.length).toBeGreaterThan(0);
  for (const r of judged) {
    expect([r.path, r.headers['x-api-key'], r.body.tool_choice?.type]).toEqual(['/v1/messages', KEY, 'tool']);
    expect(r.body.messages.some((m: { role: string }) => m.role === 'system')).toBe(false);
    expect(gradedText(r.body)).not.toBe('');
  }
}, 120_000);

// Needs the judge-side dispatch too. The case: after a refused turn, CAB's shared conversation holds an empty
// assistant answer, which the Messages API rejects ("all messages must have non-empty content…", claude-code#6774).
test('CryptoAnalystBench with an anthropic judge: a refused turn is re-asked in the conversation, which stays valid; every response judged', async () => {
  const queries = [
    { id: 'refused', text: REFUSED, tags: 'Meme Coins' },
    { id: 'calm', text: 'What moves BTC dominance?', tags: 'Market Data & Price Discovery' },
  ];
  const cfg = runConfig(tempDir(), {
    protocol: 'cab',
    queries,
    judge: {
      provider: 'anthropic',
      baseURL: sim.cabJudge.url,
      model: 'claude-sim-judge',
      apiKeyEnv: 'ANTHROPIC_API_KEY',
    },
    copilots: copilots(),
    evaluationDate: '2026-03-05',
  });
  await withWorker(
    'anthropic-cab',
    async ({ client, taskQueue, store }) => {
      const runId = `run-anthropic-cab-${Date.now()}`;
      await client.workflow.execute(benchmarkRun, { taskQueue, workflowId: runId, args: [runInput(cfg, runId)] });
      const judgments = await store.judgments(runId);
      expect(judgments.map((j) => [j.queryId, j.copilot, j.status]).sort()).toEqual(
        queries
          .flatMap((q) => [
            [q.id, 'Claude', 'ok'],
            [q.id, 'Terse', 'ok'],
          ])
          .sort(),
      );
      const requests = sim.cabJudge.requests;
      // Only the refusal went unanswered: every other request, the re-ask included, was accepted by the strict sim.
      expect(requests.filter((r) => r.content === undefined)).toHaveLength(1);
      const reask = requests.find(
        (r) => r.body.messages.length === 3 && JSON.stringify(r.body.messages).includes(REFUSED),
      )!;
      // The refused turn is an assistant turn with words in it (the transport's placeholder, or the judge layer's note).
      expect(reask.body.messages[1].role).toBe('assistant');
      expect(reask.body.messages[1].content.trim()).not.toBe('');
      for (const r of requests)
        expect(r.body.messages.filter((m: { content: string }) => !m.content.trim())).toEqual([]);
    },
    { ...process.env, ANTHROPIC_API_KEY: KEY },
  );
}, 120_000);
