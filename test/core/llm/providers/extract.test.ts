import {
  contentText,
  extractJson,
  finishProblem,
  sourcesOf,
  stripThink,
  toolCallProblem,
} from '../../../../core/llm/providers/extract';

describe('extractJson reads the answer wherever it is', () => {
  const want = { D1: { score: 3, rationale: 'fine {not a brace}' } };
  const json = JSON.stringify(want);
  test.each([
    ['bare', json],
    ['a BOM first', `\uFEFF${json}`],
    ['a fence', '```json\n' + json + '\n```'],
    ['prose around a fence', `Here is my verdict:\n\n\`\`\`\n${json}\n\`\`\`\nHope it helps.`],
    ['prose around a bare object', `Sure! ${json} That is all.`],
    ['a think block first (with braces inside)', `<think>maybe {"D1": 9}? no, {draft</think>\n${json}`],
    ['a think block whose opening tag the server removed', `I weigh it up… </think>${json}`],
  ])('%s', (_, raw) => expect(extractJson(raw)).toEqual({ value: want }));

  test('the first balanced object that parses wins; an unbalanced one is not an answer', () => {
    expect(extractJson('bad {"a": 1, and then {"b": 2}')).toEqual({ value: { b: 2 } });
    expect(extractJson('{"score": 7, "rationale": "cut')).toEqual({
      error: expect.stringMatching(/^answer is not valid JSON/),
    });
    expect(extractJson('<think>only thinking, never closed')).toEqual({ error: 'empty answer' });
  });
});

test('stripThink keeps the answer, drops every reasoning block', () => {
  expect(stripThink('<think>a</think>\n\nAnswer <think>b</think>done')).toBe('Answer done');
  expect(stripThink('no reasoning here')).toBe('no reasoning here');
});

test('content as a parts array is joined; null stays null', () => {
  expect(
    contentText([
      { type: 'text', text: '{"a":' },
      { type: 'text', text: '1}' },
    ]),
  ).toBe('{"a":1}');
  expect(contentText(null)).toBeNull();
});

test('finish reasons and tool calls are named as what they are', () => {
  expect(finishProblem('length')).toMatch(/cut off at the token limit/);
  expect(finishProblem('content_filter')).toMatch(/content filter/);
  expect(finishProblem('stop')).toBeNull();
  expect(toolCallProblem({ tool_calls: [{ function: { name: 'get_price' } }] })).toMatch(/tool call \(get_price\)/);
});

test('sources: Perplexity citations and search_results, url_citation annotations, each once', () => {
  const sources = sourcesOf(
    {
      citations: ['https://a.example/1', 'https://b.example/2'],
      search_results: [{ title: 'A', url: 'https://a.example/1' }],
    },
    { annotations: [{ type: 'url_citation', url_citation: { url: 'https://c.example/3', title: 'C' } }] },
  );
  expect(sources).toEqual([
    { url: 'https://a.example/1', title: 'A' },
    { id: '2', url: 'https://b.example/2' },
    { url: 'https://c.example/3', title: 'C' },
  ]);
});
