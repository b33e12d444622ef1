import type { SimProfile } from './types';

/** Perplexity-style search copilots: top-level `citations` and `search_results`, plus OpenAI url_citation annotations. */
export const search: SimProfile = (body, ctx) => {
  if (body.response_format) return undefined;
  return {
    content: `${ctx.plainAnswer(body)} [1][2]`,
    message: {
      annotations: [
        {
          type: 'url_citation',
          url_citation: {
            url: 'https://example.org/annotated',
            title: 'Annotated source',
            start_index: 0,
            end_index: 5,
          },
        },
      ],
    },
    extra: {
      citations: ['https://example.org/one', 'https://example.org/two'],
      search_results: [{ title: 'Source one', url: 'https://example.org/one', date: '2026-01-01' }],
    },
  };
};

/** A model that answers with a tool call instead of text. */
export const toolcall: SimProfile = () => ({
  message: {
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_price', arguments: '{"symbol":"ETH"}' } }],
  },
  finishReason: 'tool_calls',
});

/** A reply that sends its headers, then stalls before the body (a hung proxy): the client's timeout must end it. */
export const stall: SimProfile = () => ({ stallMs: 60_000 });

/** An empty answer (content ""), which a copilot must never have judged. */
export const empty: SimProfile = () => ({ content: '' });
