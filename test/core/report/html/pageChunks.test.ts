/**
 * report.html written in pieces (issue 35): the page's data with a StreamedArray is the text JSON.stringify gives the
 * same data as plain arrays, escaped for a script element the same way, and its items are made one at a time as the
 * pieces are read, so the drill-down rows of a large run are never all held at once.
 */
import { htmlPage, htmlPageChunks, StreamedArray } from '../../../../core/report/html/page';
import { drillData } from '../../../../core/report/html/runReport';
import type { Query, StoredJudgment, StoredResponse } from '../../../../core/model/types';

const withoutNonce = (html: string) => html.replace(/nonce-[^&]+&#39;|nonce="[^"]*"/g, 'NONCE');

const tricky = [
  { q: 'q1', text: 'a </script><script>alert(1)</script> b', more: undefined, f: () => 1 },
  { q: 'q2', text: 'line\u2028separator\u2029and "quotes" \\ and ünïcode', n: NaN, nested: { x: [1, null] } },
];

test('a page whose data holds a StreamedArray has the same text as with a plain array, every `<` escaped', () => {
  const page = (rows: unknown) => ({
    title: 't',
    header: '<h1>t</h1>',
    body: '<p>b</p>',
    data: { drill: { before: 1, rows, skipped: undefined, after: { deep: 'x</b>' } } },
  });
  const whole = htmlPage(page(tricky));
  const pieces = [...htmlPageChunks(page(new StreamedArray(() => tricky)))].join('');
  expect(withoutNonce(pieces)).toBe(withoutNonce(whole));
  expect(pieces).not.toContain('</script><script>alert');
  expect(JSON.stringify(new StreamedArray(() => tricky))).toBe(JSON.stringify(tricky));
  // A page without data is unchanged too (the view's pages).
  expect(withoutNonce([...htmlPageChunks({ title: 't', header: 'h', body: 'b' })].join(''))).toBe(
    withoutNonce(htmlPage({ title: 't', header: 'h', body: 'b' })),
  );
});

test('the drill-down rows are made as the page is written: one row at a time, none before the page asks', () => {
  const queries: Query[] = Array.from({ length: 50 }, (_, i) => ({ id: `q${i}`, text: `question ${i}` }) as Query);
  const copilots = ['A', 'B'];
  const responses = queries.flatMap((q) =>
    copilots.map(
      (copilot) =>
        ({ queryId: q.id, copilot, status: 'ok', text: `answer ${q.id} ${copilot}` }) as unknown as StoredResponse,
    ),
  );
  const judgments = responses.map(
    (r) =>
      ({
        queryId: r.queryId,
        copilot: r.copilot,
        status: 'ok',
        total: 50,
        scores: { D1: 5 },
      }) as unknown as StoredJudgment,
  );
  const drill = drillData(
    { queries, responses, judgments, run: { copilots, config: {} } as never, agentSteps: [] },
    { dimensions: [{ id: 'D1', name: 'D1' }], labelName: 'label', labelsOf: () => [] },
  );
  expect(drill.rows).toBeInstanceOf(StreamedArray);
  expect(drill.hasRank).toBe(false);
  const pieces = [...htmlPageChunks({ title: 't', header: 'h', body: 'b', data: { drill } })];
  const rowPieces = pieces.filter((p) => p.includes('"q":"q'));
  // Each row is its own piece (a page of a large run is written one row at a time)...
  expect(rowPieces).toHaveLength(100);
  expect(rowPieces.every((p) => (p.match(/"q":"q/g) ?? []).length === 1)).toBe(true);
  // ...and the page's data is what the whole data would have been.
  const data = JSON.parse(/id="report-data">(.*)<\/script>\n<script nonce/s.exec(pieces.join(''))![1]);
  expect(data.drill.rows).toEqual([...drill.rows]);
  expect(data.drill.rows[3]).toMatchObject({ q: 'q1', c: 'B', text: 'answer q1 B', total: 50 });
});
