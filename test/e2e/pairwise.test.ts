import fs from 'node:fs';
import path from 'node:path';
import { runInput } from '../../client/startRun';
import { parseCsv } from '../../core/io/csv';
import { benchmarkRun } from '../../workflows';
import { runConfig, simCopilots, tempDir, withWorker } from '../support/harness';
import { simServersForFile } from '../support/sims';

/**
 * The pairwise protocol (rubrics/pairwise/, registered with one line) runs through the unchanged workflows, activities,
 * store and config loader. Its scripted judge prefers the longer response, so every figure can be recomputed here
 * from the stored responses alone.
 */
const between = (user: string, heading: string) =>
  user.match(new RegExp(`${heading}:\\n<<<\\n([\\s\\S]*?)\\n>>>`))?.[1] ?? '';
const preferLonger = (body: any) => {
  if (body.response_format?.type !== 'json_schema') return undefined; // copilots get the simulator's default answers
  const user = String(body.messages.find((m: any) => m.role === 'user')?.content ?? '');
  const [a, b] = [between(user, 'Response A'), between(user, 'Response B')];
  return JSON.stringify({
    preferred: a.length > b.length ? 'A' : b.length > a.length ? 'B' : 'tie',
    rationale: 'longer is better here',
  });
};
const sim = simServersForFile({ judge: { handler: preferLonger }, genericJudge: {}, copilots: {} });

const COPILOTS = { Thorough: 'sim-thorough', Balanced: 'sim-copilot', Terse: 'sim-terse' };
const queries = Array.from({ length: 6 }, (_, i) => ({
  id: `p${i + 1}`,
  text: `Should I move ${10 * (i + 1)}% of my ETH into staked ETH before the next unlock?`,
  topic: i < 3 ? 'staking' : 'risk',
}));

test('a pairwise run: every pair judged blind in both orders, win rates recomputed from the stored responses', async () => {
  await withWorker('pairwise-e2e', async ({ client, taskQueue, store }) => {
    const before = sim.judge.requests.length;
    const cfg = runConfig(tempDir(), {
      protocol: 'pairwise',
      queries,
      judge: { baseURL: sim.judge.url, model: 'pair-judge' },
      copilots: simCopilots(sim.copilots.url, COPILOTS),
    });
    const result = await client.workflow.execute(benchmarkRun, {
      taskQueue,
      workflowId: 'pairwise-' + Date.now(),
      args: [runInput(cfg, 'run-pairwise-' + Date.now())],
    });
    const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));

    // Three copilots → three pairs per query, one judge call each, never naming a copilot.
    const requests = sim.judge.requests.slice(before);
    expect(requests).toHaveLength(queries.length * 3);
    // Every pairwise judge call is recorded like any protocol's (cost, tokens-per-minute, header pacing).
    expect((await store.llmCalls(result.runId)).filter((c) => c.role === 'judge')).toHaveLength(requests.length);
    const textOf = new Map((await store.responses(result.runId)).map((r) => [r.text!, r.copilot]));
    const shownFirst: Record<string, number> = {};
    for (const r of requests) {
      const prompt = JSON.stringify(r.body.messages);
      for (const name of Object.keys(COPILOTS)) expect(prompt).not.toContain(name);
      const user = String(r.body.messages.find((m: any) => m.role === 'user').content);
      const [a, b] = [textOf.get(between(user, 'Response A'))!, textOf.get(between(user, 'Response B'))!];
      expect(a && b && a !== b).toBeTruthy();
      const key = [a, b].sort().join('|');
      shownFirst[`${key}|${a}`] = (shownFirst[`${key}|${a}`] ?? 0) + 1;
    }
    // Order balanced: each copilot of a pair is shown first in half of that pair's comparisons (6 queries).
    for (const [k, n] of Object.entries(shownFirst)) expect([k, n]).toEqual([k, 3]);

    // Expected outcomes from the stored texts: the longer response wins.
    const responses = await store.responses(result.runId);
    const len = (q: string, c: string) => responses.find((r) => r.queryId === q && r.copilot === c)!.text!.length;
    const names = Object.keys(COPILOTS);
    for (const me of names) {
      let wins = 0;
      let ties = 0;
      let n = 0;
      for (const q of queries)
        for (const other of names.filter((o) => o !== me)) {
          n++;
          if (len(q.id, me) > len(q.id, other)) wins++;
          else if (len(q.id, me) === len(q.id, other)) ties++;
        }
      expect(report.copilots[me]).toMatchObject({ comparisons: n, wins, ties, losses: n - wins - ties });
      expect(report.copilots[me].winRate).toBeCloseTo((wins + ties / 2) / n, 12);
    }
    expect(Object.keys(report.topics).sort()).toEqual(['risk', 'staking']);
    expect(report.order.pairs).toBe(queries.length * 3);
    expect(report.order.firstWins + report.order.secondWins + report.order.ties).toBe(queries.length * 3);

    // One CSV row per judged pair; the Markdown report leads with the win rates.
    const csv = parseCsv(
      fs.readFileSync(path.join(path.dirname(result.reportPath), 'results.csv'), 'utf8'),
      'results.csv',
    );
    expect(csv).toHaveLength(1 + queries.length * 3);
    expect(fs.readFileSync(path.join(path.dirname(result.reportPath), 'report.md'), 'utf8')).toMatch(
      /## Win rates[\s\S]*\| Thorough \|/,
    );
  });
});

test('the simulator answers the pairwise schema generically: every pair gets a valid verdict', async () => {
  await withWorker('pairwise-sim', async ({ client, taskQueue }) => {
    const cfg = runConfig(tempDir(), {
      protocol: 'pairwise',
      queries: queries.slice(0, 2),
      judge: { baseURL: sim.genericJudge.url, model: 'sim-judge' },
      copilots: simCopilots(sim.copilots.url, { A: 'sim-thorough', B: 'sim-terse' }),
    });
    const result = await client.workflow.execute(benchmarkRun, {
      taskQueue,
      workflowId: 'pairwise-sim-' + Date.now(),
      args: [runInput(cfg, 'run-pairwise-sim-' + Date.now())],
    });
    const report = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'));
    expect(report.failedJudgments).toBe(0);
    expect(report.copilots.A.comparisons).toBe(2);
    expect(
      report.copilots.A.wins + report.copilots.A.ties / 2 + report.copilots.B.wins + report.copilots.B.ties / 2,
    ).toBe(2);
  });
});
