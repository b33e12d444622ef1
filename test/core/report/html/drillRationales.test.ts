/**
 * The drill-down with its rationales read a page of queries at a time (issue 35): judgments read without rationales,
 * their consensus, and the rationales of each page of queries read apart give report.html the same text as every
 * judgment read with its rationales, for repeated samples, failed samples, panels short of their quorum and answers
 * never judged; no read asks for more than a page of queries.
 */
import { htmlPageChunks, htmlPageChunksAsync } from '../../../../core/report/html/page';
import { drillData, DRILL_RATIONALE_QUERIES } from '../../../../core/report/html/runReport';
import { consensusJudgments } from '../../../../core/stats/consensus';
import type { VerdictRationales } from '../../../../core/model/store';
import type { Query, StoredJudgment, StoredResponse } from '../../../../core/model/types';

const withoutNonce = (html: string) => html.replace(/nonce-[^&]+&#39;|nonce="[^"]*"/g, 'NONCE');
const copilots = ['A', 'B'];
const queries = Array.from({ length: 2 * DRILL_RATIONALE_QUERIES + 37 }, (_, i) => ({
  id: `q${String(i).padStart(4, '0')}`,
  text: `query ${i}`,
})) as Query[];
const responses = queries.flatMap((q) =>
  copilots.map(
    (copilot) => ({ queryId: q.id, copilot, status: 'ok', text: `answer ${q.id} ${copilot}` }) as StoredResponse,
  ),
);

/** Two judges, two samples each; some samples failed, some answers never judged, some units judged by one judge only. */
function verdicts(): StoredJudgment[] {
  const rows: StoredJudgment[] = [];
  queries.forEach((q, i) =>
    copilots.forEach((copilot, c) => {
      if ((i + c) % 11 === 0) return; // never judged
      for (const judgeName of i % 7 === 3 ? ['a'] : ['a', 'b'])
        for (const sample of [0, 1]) {
          const failed = (i * 3 + c + sample + judgeName.length) % 5 === 0 || (i % 13 === 0 && judgeName === 'b');
          rows.push({
            runId: 'r1',
            queryId: q.id,
            copilot,
            rubricVersion: 'rv1',
            status: failed ? 'failed' : 'ok',
            scores: failed ? null : { D1: (i + sample) % 10, D2: (c + i) % 10 },
            rationales: failed
              ? i % 2
                ? { D1: `failed but said something ${q.id}` }
                : null
              : { D1: `${judgeName}${sample} on ${q.id}/${copilot}`, D2: 'short' },
            total: failed ? null : (i * 7 + sample) % 100,
            rank: null,
            position: null,
            error: failed ? 'invalid answer' : null,
            judge: { model: 'm', baseURL: 'http://judge.test/v1', temperature: 0, rubricVersion: 'rv1' },
            attempts: 1,
            createdAt: '2026-12-04T00:00:00.000Z',
            sample,
            judgeName,
          });
        }
    }),
  );
  return rows;
}

const how = { dimensions: [{ id: 'D1', name: 'D1' }], labelName: 'label', labelsOf: () => [] };
const run = { copilots, config: {} } as never;

test.each([1, 2])(
  'rationales read a page of queries at a time give the page the text of every judgment read with them (panel quorum %i)',
  async (minJudges) => {
    const all = verdicts();
    const whole = drillData(
      { queries, responses, judgments: consensusJudgments(all, 'mean', minJudges), run, agentSteps: [] },
      how,
    );
    const before = [...htmlPageChunks({ title: 't', header: 'h', body: 'b', data: { drill: whole } })].join('');

    const reads: string[][] = [];
    const drillRationales = async (ids: string[]): Promise<VerdictRationales[]> => {
      reads.push(ids);
      return all
        .filter((v) => ids.includes(v.queryId))
        .reverse() // in no particular order
        .map(({ queryId, copilot, sample, judgeName, rationales }) => ({
          queryId,
          copilot,
          sample: sample!,
          judgeName: judgeName!,
          rationales,
        }));
    };
    const lean = all.map((v) => ({ ...v, rationales: null }));
    const paged = drillData(
      {
        queries,
        responses,
        judgments: consensusJudgments(lean, 'mean', minJudges),
        run,
        agentSteps: [],
        drillRationales,
      },
      how,
    );
    expect(() => [...paged.rows]).toThrow(/asynchronously/);
    const pieces: string[] = [];
    for await (const piece of htmlPageChunksAsync({ title: 't', header: 'h', body: 'b', data: { drill: paged } }))
      pieces.push(piece);
    const after = pieces.join('');
    expect(withoutNonce(after)).toBe(withoutNonce(before));
    expect(after).toMatch(/a1 on q\d+\/A/); // a second sample's rationale, shown where the first failed
    expect(reads.map((ids) => ids.length)).toEqual([DRILL_RATIONALE_QUERIES, DRILL_RATIONALE_QUERIES, 37]);
    expect(reads.flat()).toEqual(queries.map((q) => q.id));
  },
);
