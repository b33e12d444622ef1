import fs from 'node:fs';
import path from 'node:path';
import { runInput } from '../../client/startRun';
import { writeAgentTraces } from '../../client/agentTraces';
import { csvAdapter } from '../../activities/adapters/csv';
import { benchmarkRun } from '../../workflows';
import { runConfig, tempDir, withWorker } from '../support/harness';
import { simServersForFile } from '../support/sims';
import { cliInProcess } from '../support/cliInProcess';
import { HALLUCINATED } from '../support/agent/toolModel';
import { agentFakesForFile } from '../support/agent/fakesForFile';

jest.setTimeout(240_000);

const sim = simServersForFile({ judge: {} });
const fakes = agentFakesForFile();

const QUERIES = [
  { id: 'q1', text: 'How are BTC and ETH priced today?', task: 'T1', category: 'C1' },
  { id: 'q2', text: 'Is SOL cheap right now?', task: 'T2', category: 'C1' },
  { id: 'q3', text: 'Compare ETH with SOL', task: 'T3', category: 'C2' },
];
const mcp = () => [{ name: 'prices', url: fakes.tools.url }];

/**
 * Agent copilots in whole runs: a run records the world its tools answered; a second run replays it for two other agent
 * configurations (another wire format, other prompts) without one request to the tool server, and their answers get the
 * same tool results as context; the grounding check catches the figure no tool returned; report.json/md/html carry the
 * steps; the exported traces read back through a csv copilot's `traces:` give the same context.
 */
test('record a world, replay it for two other configurations, catch a hallucinated figure, report the steps, export traces', async () => {
  process.env.AGENT_TEST_KEY = 'sk-test-agent'; // the worker reads the Anthropic-format copilot's key from its environment
  await withWorker('agent-world', async (world) => {
    const { client, taskQueue, store, dir } = world;
    const env = { JUDGEFLOW_HOME: world.dir, JUDGEFLOW_STORE: world.storeFile, JUDGEFLOW_TASK_QUEUE: taskQueue };
    const judge = { baseURL: sim.judge.url, model: 'judge', concurrency: 4 };
    const recordConfig = runConfig(dir, {
      protocol: 'lattice',
      queries: QUERIES,
      judge,
      grounding: { checks: ['hallucination', 'citations'] },
      copilots: [
        {
          name: 'Recorder',
          type: 'agent',
          baseURL: `${fakes.model.url}/v1`,
          model: 'tool-model',
          system: 'Answer from the tools.',
          tools: { mcp: mcp(), mode: 'record' },
        },
        {
          name: 'Hallucinator',
          type: 'agent',
          baseURL: `${fakes.model.url}/v1`,
          model: 'tool-model-hallucinating',
          tools: { mcp: mcp(), mode: 'record' },
        },
      ],
    });
    const recordRun = 'run-agent-record-' + Date.now();
    const recorded = await (
      await client.workflow.start(benchmarkRun, {
        taskQueue,
        workflowId: recordRun,
        args: [runInput(recordConfig, recordRun)],
      })
    ).result();
    // 10 tool calls in all (5 per copilot), each asked live or, when the run's recording held it already, answered from it.
    expect(new Set(fakes.tools.calls.map((c) => c.symbol))).toEqual(new Set(['BTC', 'ETH', 'SOL']));

    // The world, as the CLI lists it.
    const listed = await cliInProcess(['world', 'list', '--json'], env);
    expect(listed.code).toBe(0);
    const worlds = JSON.parse(listed.stdout);
    expect(worlds).toEqual([expect.objectContaining({ recording: recordRun, calls: 3 })]);
    const worldId: string = worlds[0].id;
    const shown = await cliInProcess(['world', 'show', worldId], env);
    expect(shown.stdout).toContain('get_price {"symbol":"ETH"}');
    expect(shown.stdout).toContain('3400.25');

    // Report: per-copilot steps and tool calls; the grounding check catches the figure no tool returned.
    const report = JSON.parse(fs.readFileSync(recorded.reportPath, 'utf8'));
    expect(report.agents.Recorder).toMatchObject({
      answers: 3,
      modelTurns: 6,
      toolCalls: 5,
      toolErrors: 0,
      tools: { get_price: { calls: 5, errors: 0 } },
    });
    expect(
      report.agents.Recorder.tools.get_price.fromWorld +
        report.agents.Hallucinator.tools.get_price.fromWorld +
        fakes.tools.calls.length,
    ).toBe(10);
    expect(report.grounding.copilots.Recorder.verificationRate).toBe(1);
    expect(report.grounding.copilots.Hallucinator.fabricated).toBe(3);
    expect(report.grounding.copilots.Hallucinator.verificationRate).toBeLessThan(1);
    const fabricated = (await store.groundingChecks(recordRun))
      .filter((c) => c.copilot === 'Hallucinator')
      .flatMap((c) => c.claims)
      .filter((c) => c.status === 'fabricated');
    expect(fabricated.map((c) => c.text)).toEqual([HALLUCINATED, HALLUCINATED, HALLUCINATED]);
    const md = fs.readFileSync(path.join(path.dirname(recorded.reportPath), 'report.md'), 'utf8');
    expect(md).toContain('## Agent copilots');
    const html = fs.readFileSync(path.join(path.dirname(recorded.reportPath), 'report.html'), 'utf8');
    expect(html).toContain('id="agent-table"');
    const drill = JSON.parse(
      html.match(/<script type="application\/json" id="report-data"[^>]*>([\s\S]*?)<\/script>/)![1],
    ).drill;
    const row = drill.rows.find((r: any) => r.c === 'Recorder' && r.q === 'q1');
    expect(row.st.map((s: any) => [s.k, s.t ?? null, s.a ?? null])).toEqual([
      ['model', null, null],
      ['tool', 'get_price', '{"symbol":"BTC"}'],
      ['tool', 'get_price', '{"symbol":"ETH"}'],
      ['model', null, null],
    ]);
    expect(row.st[1].r).toContain('97000.5');
    expect(row.st[0].tok).toBeGreaterThan(0);
    // The tools as listed at the run's start, kept with the run.
    expect((await store.artefacts(recordRun)).map((a) => a.name).sort()).toEqual([
      'agent-tools-Hallucinator.json',
      'agent-tools-Recorder.json',
    ]);

    // Replay for two other configurations: no request reaches the tool server; the same tool results.
    const callsBefore = fakes.tools.calls.length;
    const replayConfig = runConfig(dir, {
      protocol: 'lattice',
      queries: QUERIES,
      judge,
      copilots: [
        {
          name: 'ViaOpenAI',
          type: 'agent',
          baseURL: `${fakes.model.url}/v1`,
          model: 'tool-model',
          system: 'Be terse.',
          tools: { mcp: mcp(), mode: 'replay', world: worldId },
        },
        {
          name: 'ViaAnthropic',
          type: 'agent',
          provider: 'anthropic',
          baseURL: fakes.model.url,
          apiKeyEnv: 'AGENT_TEST_KEY',
          model: 'tool-model',
          system: 'Be thorough.',
          tools: { mcp: mcp(), mode: 'replay', world: worldId },
        },
      ],
    });
    const replayRun = 'run-agent-replay-' + Date.now();
    const replayed = await (
      await client.workflow.start(benchmarkRun, {
        taskQueue,
        workflowId: replayRun,
        args: [runInput(replayConfig, replayRun)],
      })
    ).result();
    expect(replayed.progress).toMatchObject({ stage: 'done', failures: 0 });
    expect(fakes.tools.calls.length).toBe(callsBefore);
    const contextOf = async (runId: string, copilot: string) =>
      Object.fromEntries(
        (await store.responses(runId)).filter((r) => r.copilot === copilot).map((r) => [r.queryId, r.context]),
      );
    const original = await contextOf(recordRun, 'Recorder');
    expect(await contextOf(replayRun, 'ViaOpenAI')).toEqual(original);
    expect(await contextOf(replayRun, 'ViaAnthropic')).toEqual(original);
    expect(fakes.model.requests.some((r) => r.path === '/v1/messages' && r.body.system === 'Be thorough.')).toBe(true);

    // Traces in the reference harness's layout, read back by judgeflow's own csv copilot with traces: the same context.
    const out = path.join(tempDir(), 'traces');
    const written = await writeAgentTraces(store, replayRun, out);
    expect(written).toEqual({ files: 6, copilots: ['ViaOpenAI', 'ViaAnthropic'] });
    const responses = await store.responses(replayRun);
    for (const name of ['ViaOpenAI', 'ViaAnthropic']) {
      const copilot = csvAdapter.create(
        csvAdapter.configSchema.parse({
          name,
          type: 'csv',
          path: path.join(out, 'answers.csv'),
          column: `${name}_response`,
          traces: { dir: out },
        }),
        { env: {} },
      );
      for (const q of QUERIES) {
        const back = await copilot.collect({ query: q, signal: AbortSignal.timeout(5_000) });
        const stored = responses.find((r) => r.copilot === name && r.queryId === q.id)!;
        expect([back.text, back.context]).toEqual([stored.text, stored.context]);
      }
    }
    const trace = JSON.parse(fs.readFileSync(path.join(out, 'ViaOpenAI', 'traces', `${replayRun}.q1.json`), 'utf8'));
    const spans = trace.traces[0].spans;
    expect(spans.map((s: any) => [s.name, s.span_kind])).toEqual([
      ['Cyrpto Final Response', 'LLM'],
      ['get_price', 'TOOL'],
      ['get_price', 'TOOL'],
    ]);
  });
});
