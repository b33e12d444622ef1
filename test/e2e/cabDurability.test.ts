import fs from 'node:fs';
import path from 'node:path';
import { benchmarkRun } from '../../workflows';
import { runInput } from '../../client/startRun';
import { startSimServer, type SimServer } from '../../sim/server';
import { runConfig, tempDir, withWorker } from '../support/harness';
import { hashInt } from '../support/judges';
import { biasedScoring, queryTextOf, rankingByTotals, schemaName, schemaOf, scoringPrompts } from '../support/cabJudge';

let copilots: SimServer;
beforeAll(async () => {
  copilots = await startSimServer({});
});
afterAll(async () => {
  await copilots.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const turnOf = (body: any) => (schemaName(body) === 'cab_ranking' ? 'ranking' : scoringPrompts(body).length);
const isReask = (body: any) => JSON.stringify(body.messages).includes('That answer was invalid');

function cabConfig(
  dir: string,
  queries: Array<Record<string, unknown>>,
  judgeURL: string,
  systems: Array<[string, string]>,
  extra: Record<string, unknown> = {},
) {
  return runConfig(dir, {
    protocol: 'cab',
    queries,
    judge: { baseURL: judgeURL, model: 'judge', concurrency: 4, timeoutMs: 1000 },
    copilots: systems.map(([name, model]) => ({ name, type: 'openai', baseURL: copilots.url, model })),
    evaluationDate: '2026-03-05',
    ...extra,
  });
}

test('a conversation interrupted at turn 3 (HTTP 500, or a reply hung past the judge timeout) resumes at turn 3: turns 1-2 are not re-asked and the judge sees the same messages', async () => {
  const FAIL = 'Turn three fails once: should I stake ETH on Lido?';
  const HANG = 'Turn three hangs once: is SOL undervalued?';
  const CALM = 'Nothing goes wrong here: what moves BTC dominance?';
  const interrupted = new Set<string>();
  const judge = await startSimServer({
    handler: async (body) => {
      const name = schemaName(body);
      if (name === 'cab_ranking') return JSON.stringify(rankingByTotals(body));
      if (name !== 'cab_scores') return undefined;
      const query = queryTextOf(body);
      if (scoringPrompts(body).length === 3 && !interrupted.has(query)) {
        if (query === FAIL) {
          interrupted.add(query);
          return { status: 500 };
        }
        if (query === HANG) {
          interrupted.add(query);
          await sleep(2500); // the judge client gives up after timeoutMs = 1000
        }
      }
      return JSON.stringify(biasedScoring(body, 0));
    },
  });
  try {
    await withWorker('cab-resume', async ({ client, taskQueue, store }) => {
      const dir = tempDir();
      const queries = [
        { id: 'fail', text: FAIL, tags: 'Security & Risks' },
        { id: 'hang', text: HANG, tags: ['Market Data & Price Discovery', 'Meme Coins'] },
        {
          id: 'calm',
          text: CALM,
          history: [
            { role: 'user', content: 'I hold 0.5 BTC and some ETH.' },
            { role: 'assistant', content: 'Noted, a BTC-heavy portfolio.' },
          ],
          context: 'CONTEXT-MARKER: BTC dominance was 57.1% on 2026-03-04.',
        },
      ];
      const systems: Array<[string, string]> = [
        ['Alpha', 'sim-thorough'],
        ['Bravo', 'sim-terse'],
        ['Charlie', 'sim-copilot'],
        ['Delta', 'sim-thorough'],
      ];
      // answerTimestamps: the blog's variant, so the turn states when the answer was written (the reference does not).
      const cfg = cabConfig(dir, queries, judge.url, systems, {
        evaluationDate: undefined,
        cab: { evaluationDate: '2026-03-05', answerTimestamps: true },
      });
      const runId = 'run-cab-resume-' + Date.now();
      const result = await client.workflow.execute(benchmarkRun, {
        taskQueue,
        workflowId: runId,
        args: [runInput(cfg, runId)],
      });

      expect(interrupted).toEqual(new Set([FAIL, HANG]));
      for (const text of [FAIL, HANG]) {
        const mine = judge.requests.map((r) => r.body).filter((b) => queryTextOf(b) === text);
        const byTurn = (t: number | 'ranking') => mine.filter((b) => turnOf(b) === t);
        expect([1, 2, 3, 4, 'ranking'].map((t) => byTurn(t as number | 'ranking').length)).toEqual([1, 1, 2, 1, 1]);
        // The retried turn-3 request is exactly the interrupted one.
        const [first, again] = byTurn(3);
        expect(again.messages).toEqual(first.messages);
        // And the conversation goes on from it: turn 4 = turn 3 + the judge's answer + the next response.
        const fourth = byTurn(4)[0];
        expect(fourth.messages.slice(0, again.messages.length)).toEqual(again.messages);
        expect(fourth.messages).toHaveLength(again.messages.length + 2);
        expect(
          await store.judgeTurns(runId, text === FAIL ? 'fail' : 'hang', (await store.getRun(runId))!.rubricVersion),
        ).toHaveLength(5);
      }
      const judgments = await store.judgments(runId);
      expect(judgments).toHaveLength(12);
      expect(judgments.every((j) => j.status === 'ok' && j.rank !== null)).toBe(true);

      // What a turn carries: evaluation date, the response's own timestamp (asked for), the user's earlier turns, the context.
      const calm = judge.requests
        .map((r) => r.body)
        .filter((b) => queryTextOf(b) === CALM && schemaName(b) === 'cab_scores');
      const firstTurn = calm.find((b) => turnOf(b) === 1)!;
      const shownFirst = (await store.judgeUnits(runId)).find((u) => u.queryId === 'calm')!.copilots[0];
      const prompt = firstTurn.messages[1].content as string;
      expect(firstTurn.messages[0].content).toContain('Evaluation date: 2026-03-05');
      expect(prompt).toContain(
        `Response #1 was written at: ${(await store.getResponse(runId, 'calm', shownFirst))!.finishedAt}`,
      );
      expect(prompt).toContain('I hold 0.5 BTC and some ETH.');
      expect(prompt).toContain('CONTEXT-MARKER');
      const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
      expect(report.evaluationDate).toBe('2026-03-05');
      expect(Object.keys(report.tags).sort()).toEqual([
        'Market Data & Price Discovery',
        'Meme Coins',
        'Security & Risks',
      ]);
      expect(report.tags['Meme Coins'].Alpha.n).toBe(1);
    });
  } finally {
    await judge.close();
  }
});

test('a ranking that is not a permutation is re-asked in the same conversation, then recorded as a failure; a failed scoring turn fails only that response; error taxonomy rates match the flags', async () => {
  const NEVER = 'The judge never ranks this one properly: is ARB a good buy?';
  const ONCE = 'The judge fixes its ranking when told: compare OP and ARB.';
  const BADTURN = 'The judge breaks on the second response: explain restaking.';
  const flagOf = (text: string, flag: string) => hashInt(`${text}|${flag}`) % 2;
  const judge = await startSimServer({
    handler: (body) => {
      const name = schemaName(body);
      const query = name === 'cab_error_taxonomy' ? '' : queryTextOf(body);
      if (name === 'cab_ranking') {
        const good = rankingByTotals(body);
        if (query === NEVER || (query === ONCE && !isReask(body))) {
          const labels = good.ranking;
          return JSON.stringify({ ranking: [labels[0], labels[0], ...labels.slice(1, -1)], rationale: 'oops' });
        }
        return JSON.stringify(good);
      }
      if (name === 'cab_scores') {
        if (query === BADTURN && scoringPrompts(body).length === 2)
          return JSON.stringify({ relevance: { score: 11, reasoning: 'too high' } });
        return JSON.stringify(biasedScoring(body, 0));
      }
      if (name === 'cab_error_taxonomy') {
        const text = (body.messages[1].content as string).match(/Response to check:\n<<<\n([\s\S]*?)\n>>>/)![1];
        return JSON.stringify(
          Object.fromEntries(
            Object.keys(schemaOf(body).properties).map((f) => [f, { score: flagOf(text, f), reasoning: f }]),
          ),
        );
      }
      return undefined;
    },
  });
  try {
    await withWorker('cab-rank', async ({ client, taskQueue, store }) => {
      const dir = tempDir();
      const queries = [NEVER, ONCE, BADTURN, 'An ordinary one: what is a liquid staking token?'].map((text, i) => ({
        id: `r${i + 1}`,
        text,
      }));
      const systems: Array<[string, string]> = [
        ['Alpha', 'sim-thorough'],
        ['Bravo', 'sim-terse'],
        ['Charlie', 'sim-copilot'],
      ];
      const cfg = cabConfig(dir, queries, judge.url, systems, { errorTaxonomy: true });
      const runId = 'run-cab-rank-' + Date.now();
      const result = await client.workflow.execute(benchmarkRun, {
        taskQueue,
        workflowId: runId,
        args: [runInput(cfg, runId)],
      });
      const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
      const bodies = judge.requests.map((r) => r.body);
      const rankings = (text: string) =>
        bodies.filter((b) => schemaName(b) === 'cab_ranking' && queryTextOf(b) === text);

      // Never a permutation: asked 1 + maxInvalidAnswers (2) times, each re-ask inside the same conversation.
      const never = rankings(NEVER);
      expect(never).toHaveLength(3);
      for (let k = 1; k < 3; k++) {
        expect(never[k].messages.slice(0, never[k - 1].messages.length)).toEqual(never[k - 1].messages);
        expect(never[k].messages.slice(-2).map((m: any) => m.role)).toEqual(['assistant', 'user']);
        expect(never[k].messages[never[k].messages.length - 1].content).toMatch(/exactly once/);
      }
      const neverJudgments = (await store.judgments(runId)).filter((j) => j.queryId === 'r1');
      expect(neverJudgments).toHaveLength(systems.length);
      expect(neverJudgments.every((j) => j.status === 'ok' && j.rank === null && j.total !== null)).toBe(true);
      expect(report.rankingFailures).toBe(1);

      // Fixed on the re-ask: ranks recorded, a permutation of 1..3.
      expect(rankings(ONCE)).toHaveLength(2);
      expect(
        (await store.judgments(runId))
          .filter((j) => j.queryId === 'r2')
          .map((j) => j.rank)
          .sort(),
      ).toEqual([1, 2, 3]);

      // A scoring turn that stays invalid: that response's judgment failed; the others and the ranking go on.
      const bad = (await store.judgments(runId)).filter((j) => j.queryId === 'r3');
      const failed = bad.filter((j) => j.status === 'failed');
      expect(failed).toHaveLength(1);
      expect(failed[0].position).toBe(2);
      expect(failed[0].error).toMatch(/invalid judge answer after 3 attempts/);
      expect(bad.every((j) => j.rank !== null)).toBe(true);
      const thirdTurn = bodies.find(
        (b) => queryTextOf(b) === BADTURN && schemaName(b) === 'cab_scores' && scoringPrompts(b).length === 3,
      )!;
      expect(isReask(thirdTurn)).toBe(true); // the judge's failed exchanges stay in the conversation
      expect(report.systems[failed[0].copilot].failed).toBe(1);
      expect(report.systems[failed[0].copilot].n).toBe(3);

      // The reference's rules on the same verdicts, recomputed here: the failed scoring is 1 on every dimension, r1
      // (ranking failed) is ranked by the sum of its scores (ties in the order shown); judgeflow's figures exclude both.
      const stored = await store.judgments(runId);
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const DIMS = ['temporal_relevance', 'data_consistency', 'depth', 'relevance'];
      const sumOf = (j: any) => (j.status === 'ok' ? DIMS.reduce((n, d) => n + j.scores[d], 0) : 4);
      const r1 = stored
        .filter((j) => j.queryId === 'r1')
        .sort((a, b) => a.position! - b.position!)
        .sort((a, b) => sumOf(b) - sumOf(a));
      const refRank = (j: any) => (j.queryId === 'r1' ? r1.findIndex((x) => x.copilot === j.copilot) + 1 : j.rank);
      for (const [system] of systems) {
        const mine = stored.filter((j) => j.copilot === system);
        const filled = DIMS.map((d) => mean(mine.map((j) => (j.status === 'ok' ? j.scores![d] : 1))));
        expect(report.referenceRules.systems[system].score).toBeCloseTo(mean(filled), 9);
        expect(report.referenceRules.systems[system].meanRank).toBeCloseTo(mean(mine.map(refRank)), 9);
        const ok = mine.filter((j) => j.status === 'ok');
        expect(report.systems[system].score).toBeCloseTo(mean(DIMS.map((d) => mean(ok.map((j) => j.scores![d])))), 9);
        expect(report.systems[system].meanRank).toBeCloseTo(
          mean(mine.filter((j) => j.rank !== null).map((j) => j.rank!)),
          9,
        );
      }
      expect(report.referenceRules).toMatchObject({
        items: 12,
        rankedByTotal: 1,
        differ: { scores: 1, ranks: 3, flags: 0 },
      });
      expect(fs.readFileSync(path.join(path.dirname(result.reportPath), 'report.md'), 'utf8')).toContain(
        "## Under the reference's rules for failures",
      );

      // Error taxonomy: one independent call per collected response, its scoring failed or not; rates are the flags' means.
      const byText = new Map((await store.responses(runId)).map((r) => [r.text!, r.copilot]));
      const taxonomyCalls = bodies.filter((b) => schemaName(b) === 'cab_error_taxonomy');
      expect(taxonomyCalls).toHaveLength(4 * 3);
      expect(failed[0].scores).toEqual(expect.objectContaining({ 'taxonomy.shallow_synthesis': expect.any(Number) }));
      expect(taxonomyCalls.every((b) => b.messages.length === 2)).toBe(true);
      const flags: Record<string, Record<string, number[]>> = {};
      for (const b of taxonomyCalls) {
        const text = (b.messages[1].content as string).match(/Response to check:\n<<<\n([\s\S]*?)\n>>>/)![1];
        const system = byText.get(text)!;
        for (const f of Object.keys(schemaOf(b).properties)) ((flags[system] ??= {})[f] ??= []).push(flagOf(text, f));
      }
      for (const [system, perFlag] of Object.entries(flags)) {
        expect(Object.keys(perFlag)).toHaveLength(7);
        for (const [f, xs] of Object.entries(perFlag))
          expect(report.systems[system].taxonomy.rates[f]).toBeCloseTo(xs.reduce((a, b) => a + b, 0) / xs.length, 9);
      }
      expect(fs.readFileSync(path.join(path.dirname(result.reportPath), 'report.md'), 'utf8')).toContain(
        '## Error taxonomy',
      );
      for (const name of ['Alpha', 'Bravo', 'Charlie']) expect(JSON.stringify(bodies)).not.toContain(name);
    });
  } finally {
    await judge.close();
  }
});
