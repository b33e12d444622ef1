/**
 * Agent answers as trace files in the layout the CryptoAnalystBench reference harness reads: `<copilot>/traces/<chat_id>.json`,
 * a `traces[].spans[]` list whose span named "Cyrpto Final Response" (sic, the reference's name) carries the context the
 * answer was written from as `attributes.input.value` (a chat request: its last message's content is the context) and
 * the answer as `attributes.output.value` (a completion: `choices[0].message.content`), with the answers CSV naming each
 * trace by a `<copilot>_chat_id` column. The attribute names are OpenInference's (`input.value`, `output.value`,
 * `openinference.span.kind`, `tool.name`), flattened as the reference reads them; each tool call is a TOOL span too.
 * judgeflow's own CSV copilot with `traces:` reads them back (activities/adapters/traces.ts).
 */
import type { AgentToolStep, StoredAgentStep } from '../model/agentSteps';
import type { Query, StoredResponse } from '../model/types';

export const FINAL_SPAN_NAME = 'Cyrpto Final Response'; // sic: the reference harness's span name

export interface TraceFile {
  copilot: string;
  chatId: string;
  /** Relative to the export folder: `<copilot>/traces/<chat_id>.json`. */
  file: string;
  content: Record<string, unknown>;
}

/** A chat id that names a trace file: the run and the query, in the characters the trace reader accepts. */
export function traceChatId(runId: string, queryId: string): string {
  return `${runId}.${queryId}`.replace(/[^\w.:-]+/g, '_').replace(/\.{2,}/g, '.');
}

/** One trace file per answered item of the given copilots, and the answers CSV's rows (query, <c>_response, <c>_chat_id). */
export function agentTraceFiles(args: {
  runId: string;
  queries: Query[];
  responses: StoredResponse[];
  steps: StoredAgentStep[];
  copilots: Array<{ name: string; system?: string; model?: string }>;
}): { files: TraceFile[]; csv: string[][] } {
  const key = (q: string, c: string) => `${q}\u0000${c}`;
  const responseOf = new Map(args.responses.map((r) => [key(r.queryId, r.copilot), r]));
  const stepsOf = new Map<string, StoredAgentStep[]>();
  for (const s of args.steps)
    stepsOf.set(key(s.queryId, s.copilot), [...(stepsOf.get(key(s.queryId, s.copilot)) ?? []), s]);
  const files: TraceFile[] = [];
  const csv: string[][] = [['query', ...args.copilots.flatMap((c) => [`${c.name}_response`, `${c.name}_chat_id`])]];
  for (const q of args.queries) {
    const row = [q.text];
    for (const c of args.copilots) {
      const r = responseOf.get(key(q.id, c.name));
      if (!r || r.status !== 'ok' || r.text === null) {
        row.push('', '');
        continue;
      }
      const chatId = traceChatId(args.runId, q.id);
      files.push({
        copilot: c.name,
        chatId,
        file: `${c.name}/traces/${chatId}.json`,
        content: traceOf({ chatId, query: q, response: r, steps: stepsOf.get(key(q.id, c.name)) ?? [], copilot: c }),
      });
      row.push(r.text, chatId);
    }
    csv.push(row);
  }
  return { files, csv };
}

function traceOf(args: {
  chatId: string;
  query: Query;
  response: StoredResponse;
  steps: StoredAgentStep[];
  copilot: { name: string; system?: string; model?: string };
}): Record<string, unknown> {
  const traceId = args.chatId;
  const finalId = `${args.chatId}.final`;
  const tools = args.steps
    .map((s) => s.step)
    .filter((s): s is AgentToolStep => s.kind === 'tool' && s.origin !== 'limit');
  const messages = [
    ...(args.copilot.system ? [{ role: 'system', content: args.copilot.system }] : []),
    ...(args.query.history ?? []).map((t) => ({ role: t.role, content: t.content })),
    { role: 'user', content: args.query.text },
    // The reference reads the context from the last message: the tool results the answer was written from.
    { role: 'user', content: args.response.context ?? '' },
  ];
  const spans = [
    {
      name: FINAL_SPAN_NAME,
      span_kind: 'LLM',
      'context.span_id': finalId,
      'context.trace_id': traceId,
      parent_id: null,
      start_time: args.response.startedAt,
      end_time: args.response.finishedAt,
      'attributes.openinference.span.kind': 'LLM',
      ...(args.copilot.model ? { 'attributes.llm.model_name': args.copilot.model } : {}),
      'attributes.input.value': { messages },
      'attributes.output.value': {
        choices: [{ index: 0, message: { role: 'assistant', content: args.response.text } }],
      },
    },
    ...tools.map((t) => ({
      name: t.tool,
      span_kind: 'TOOL',
      'context.span_id': `${args.chatId}.${t.seq}`,
      'context.trace_id': traceId,
      parent_id: finalId,
      start_time: t.startedAt,
      end_time: t.finishedAt,
      status_code: t.isError ? 'ERROR' : 'OK',
      'attributes.openinference.span.kind': 'TOOL',
      'attributes.tool.name': t.tool,
      'attributes.input.value': JSON.stringify(t.arguments),
      'attributes.output.value': t.result,
    })),
  ];
  return { session_id: args.chatId, traces: [{ trace_id: traceId, spans }] };
}
