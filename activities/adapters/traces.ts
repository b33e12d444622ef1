import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { AdapterError } from './types';

/**
 * Agent traces as the CryptoAnalystBench reference harness keeps them: `<dir>/<copilot>/traces/<chat_id>.json`, a
 * `traces[].spans[]` list in which the span named `spanName` carries the context the agent answered from
 * (`attributes.input.value`: its last message's content when it is a chat request) and the answer
 * (`attributes.output.value`: the completion's message content). The same span read from OpenInference/OpenTelemetry
 * exports (Phoenix, Langfuse) when their attribute names match: nested or flat `attributes`, OTel key/value lists,
 * `resourceSpans[].scopeSpans[].spans[]`, Langfuse observations with `input` and `output`.
 */

export const REFERENCE_SPAN_NAME = 'Cyrpto Final Response'; // sic: the reference harness's span name

export const tracesSchema = z
  .object({
    dir: z
      .string()
      .min(1)
      .describe(
        "folder holding <copilot name>/traces/<chat_id>.json per answer (the reference harness's output folder)",
      ),
    spanName: z
      .string()
      .min(1)
      .default(REFERENCE_SPAN_NAME)
      .describe('the span whose input is the context and whose output is the answer'),
  })
  .strict()
  .describe(
    "read each answer's context (and the answer, when the CSV has none) from the copilot's trace files, by the row's <name>_chat_id",
  );

export type TracesConfig = z.infer<typeof tracesSchema>;

export interface TraceReading {
  context?: string;
  answer?: string;
  /** The trace file read, for messages. */
  file: string;
}

/** The trace file of one answer, or null when there is none for that chat id. */
export function traceFile(config: TracesConfig, copilot: string, chatId: string): string | null {
  if (!/^[\w.:-]+$/.test(chatId) || chatId.includes('..'))
    throw new AdapterError('config', `chat id "${chatId}" cannot name a trace file (letters, digits, . _ : - only)`);
  const file = path.join(config.dir, copilot, 'traces', `${chatId}.json`);
  return existsSync(file) ? file : null;
}

/** Context and answer from one answer's trace file; null when the file does not exist or has no span of that name. */
export function readTrace(config: TracesConfig, copilot: string, chatId: string): TraceReading | null {
  const file = traceFile(config, copilot, chatId);
  if (!file) return null;
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new AdapterError('invalid_reply', `trace file ${file} is not valid JSON (${(error as Error).message})`);
  }
  const span = spansOf(data).find((s) => spanName(s) === config.spanName);
  if (!span) return null;
  const context = contextOf(attribute(span, 'input.value'));
  const answer = answerOf(attribute(span, 'output.value'));
  return { file, ...(context ? { context } : {}), ...(answer ? { answer } : {}) };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => Boolean(v) && typeof v === 'object' && !Array.isArray(v);

/** Every span of a trace document, whichever of the known layouts it has (spans nest in traces, resource and scope lists). */
export function spansOf(data: unknown): Obj[] {
  if (Array.isArray(data)) return data.flatMap(spansOf);
  if (!isObj(data)) return [];
  const isSpan =
    typeof data.name === 'string' &&
    Object.keys(data).some((k) => k === 'attributes' || k.startsWith('attributes.') || k === 'input' || k === 'output');
  const nested = ['traces', 'spans', 'resourceSpans', 'scopeSpans', 'data', 'observations'].flatMap((k) =>
    spansOf(data[k]),
  );
  return isSpan ? [data, ...nested] : nested;
}

function spanName(span: Obj): string | undefined {
  return typeof span.name === 'string' ? span.name : undefined;
}

/** An attribute such as `input.value` under any of the spellings exports use. */
export function attribute(span: Obj, name: string): unknown {
  if (`attributes.${name}` in span) return parsed(span[`attributes.${name}`]);
  const attrs = span.attributes;
  if (Array.isArray(attrs)) {
    const kv = attrs.find((a) => isObj(a) && a.key === name) as Obj | undefined;
    if (kv) return parsed(otelValue(kv.value));
  } else if (isObj(attrs)) {
    if (name in attrs) return parsed(attrs[name]);
    let current: unknown = attrs;
    for (const part of name.split('.')) current = isObj(current) ? current[part] : undefined;
    if (current !== undefined) return parsed(current);
  }
  const langfuse = name === 'input.value' ? span.input : name === 'output.value' ? span.output : undefined;
  return parsed(langfuse);
}

function otelValue(value: unknown): unknown {
  if (!isObj(value)) return value;
  for (const k of ['stringValue', 'intValue', 'doubleValue', 'boolValue']) if (k in value) return value[k];
  return value;
}

/** Exports keep JSON payloads as text; a value that is a JSON object or array is read as one. */
function parsed(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const t = value.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return value;
  try {
    return JSON.parse(t);
  } catch {
    return value;
  }
}

const text = (v: unknown): string | undefined =>
  v === undefined || v === null ? undefined : typeof v === 'string' ? v : JSON.stringify(v, null, 2);

/** The reference's rule: a chat request's last message content; a string as it is; anything else as JSON. */
export function contextOf(value: unknown): string | undefined {
  if (isObj(value) && Array.isArray(value.messages)) {
    const last = value.messages[value.messages.length - 1];
    return isObj(last) ? text(last.content) : undefined;
  }
  return text(value)?.trim() ? text(value) : undefined;
}

/** A completion's first message content; a string as it is; anything else as JSON. */
export function answerOf(value: unknown): string | undefined {
  if (isObj(value) && Array.isArray(value.choices)) {
    const first = value.choices[0];
    return isObj(first) && isObj(first.message) ? text(first.message.content) : undefined;
  }
  return text(value)?.trim() ? text(value) : undefined;
}
