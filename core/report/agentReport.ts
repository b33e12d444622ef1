/**
 * What agent copilots did, for report.json (`agents`), report.md and report.html: per copilot the model turns, tool calls
 * (per tool), tool errors, time and cost per answer; per answer its steps (the drill-down shows them).
 */
import type { AgentModelStep, AgentToolStep, StoredAgentStep } from '../model/agentSteps';
import type { CostSummary } from '../stats/cost';
import { fmt, table } from './markdown';
import { quantileSorted } from '../stats/stats';

export interface AgentCopilotFigures {
  /** Answers with at least one stored step. */
  answers: number;
  modelTurns: number;
  toolCalls: number;
  /** Calls per tool name, and how many of them returned an error result. */
  tools: Record<string, { calls: number; errors: number; fromWorld: number }>;
  toolErrors: number;
  /** Calls not run because the answer's maxToolCalls was reached. */
  callsOverLimit: number;
  meanModelTurns: number | null;
  meanToolCalls: number | null;
  /** From an answer's first step's start to its last step's end (across retried attempts), median and mean. */
  medianSecondsPerAnswer: number | null;
  meanSecondsPerAnswer: number | null;
  /** The copilot's estimated cost (report.json cost) over its answers; null without prices. */
  costPerAnswerUsd: number | null;
}

export type AgentFigures = Record<string, AgentCopilotFigures>;

/** Per-copilot figures from every stored step of a run; null when the run has no agent copilot. */
export function agentFigures(steps: StoredAgentStep[], cost: CostSummary | undefined): AgentFigures | null {
  if (!steps.length) return null;
  const byCopilot = new Map<string, Map<string, StoredAgentStep[]>>();
  for (const s of steps) {
    const items = byCopilot.get(s.copilot) ?? new Map<string, StoredAgentStep[]>();
    byCopilot.set(s.copilot, items);
    items.set(s.queryId, [...(items.get(s.queryId) ?? []), s]);
  }
  const out: AgentFigures = {};
  for (const [copilot, items] of [...byCopilot].sort(([a], [b]) => a.localeCompare(b))) {
    const tools: AgentCopilotFigures['tools'] = {};
    let modelTurns = 0;
    let toolCalls = 0;
    let toolErrors = 0;
    let overLimit = 0;
    const seconds: number[] = [];
    for (const itemSteps of items.values()) {
      const list = itemSteps.map((s) => s.step);
      for (const step of list) {
        if (step.kind === 'model') modelTurns++;
        else if (step.origin === 'limit') overLimit++;
        else {
          toolCalls++;
          const t = (tools[step.tool] ??= { calls: 0, errors: 0, fromWorld: 0 });
          t.calls++;
          if (step.isError) (t.errors++, toolErrors++);
          if (step.origin === 'world') t.fromWorld++;
        }
      }
      const start = Math.min(...list.map((s) => Date.parse(s.startedAt)));
      const end = Math.max(...list.map((s) => Date.parse(s.finishedAt)));
      if (Number.isFinite(start) && Number.isFinite(end)) seconds.push((end - start) / 1000);
    }
    const answers = items.size;
    const usd = cost?.copilots[copilot]?.estimatedCostUsd ?? null;
    out[copilot] = {
      answers,
      modelTurns,
      toolCalls,
      tools: Object.fromEntries(Object.entries(tools).sort(([a], [b]) => a.localeCompare(b))),
      toolErrors,
      callsOverLimit: overLimit,
      meanModelTurns: answers ? modelTurns / answers : null,
      meanToolCalls: answers ? toolCalls / answers : null,
      medianSecondsPerAnswer: seconds.length
        ? quantileSorted(
            [...seconds].sort((a, b) => a - b),
            0.5,
          )
        : null,
      meanSecondsPerAnswer: seconds.length ? seconds.reduce((a, b) => a + b, 0) / seconds.length : null,
      costPerAnswerUsd: usd === null || !answers ? null : usd / answers,
    };
  }
  return out;
}

export const AGENT_HEADER = [
  'copilot',
  'answers',
  'model turns',
  'tool calls',
  'tool errors',
  'turns / answer',
  'tool calls / answer',
  'median s / answer',
  'cost / answer (USD)',
];

export function agentRows(figures: AgentFigures): Array<Array<string | number | null>> {
  return Object.entries(figures).map(([c, f]) => [
    c,
    f.answers,
    f.modelTurns,
    f.toolCalls,
    f.toolErrors,
    fmt(f.meanModelTurns, 1),
    fmt(f.meanToolCalls, 1),
    fmt(f.medianSecondsPerAnswer, 2),
    f.costPerAnswerUsd === null ? null : f.costPerAnswerUsd.toFixed(4),
  ]);
}

export const TOOL_HEADER = ['copilot', 'tool', 'calls', 'errors', 'answered from the world'];

export function toolRows(figures: AgentFigures): Array<Array<string | number | null>> {
  return Object.entries(figures).flatMap(([c, f]) =>
    Object.entries(f.tools).map(([tool, t]) => [c, tool, t.calls, t.errors, t.fromWorld]),
  );
}

/** report.md's agent section. */
export function agentMarkdown(figures: AgentFigures | null | undefined): string[] {
  if (!figures) return [];
  return [
    '',
    '## Agent copilots',
    '',
    'Model turns, tool calls and time per answer, from the steps stored as each completed:',
    '',
    table(AGENT_HEADER, agentRows(figures)),
    '',
    'Tool calls per tool:',
    '',
    table(TOOL_HEADER, toolRows(figures)),
  ];
}

/** Longest tool result shown per step in report.html; the whole result stays in the results store. */
export const STEP_RESULT_CHARS = 600;

/** One step as the drill-down shows it (short keys: a run can have thousands). */
export interface DrillStep {
  k: 'model' | 'tool';
  /** tool name, arguments as JSON, the result cut to STEP_RESULT_CHARS, an error result */
  t?: string;
  a?: string;
  r?: string;
  e?: boolean;
  w?: boolean;
  /** a model turn's text (cut) and the tools it called */
  x?: string;
  ms: number;
  tok?: number;
}

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}… (${s.length - n} more characters)` : s);

export function drillSteps(steps: StoredAgentStep[]): DrillStep[] {
  return steps.map(({ step }) => (step.kind === 'model' ? modelDrill(step) : toolDrill(step)));
}

function modelDrill(step: AgentModelStep): DrillStep {
  const tokens = (step.usage.promptTokens ?? 0) + (step.usage.completionTokens ?? 0);
  const calls = step.toolCalls.map((c) => c.name).join(', ');
  return {
    k: 'model',
    x: cut(step.text ?? (calls ? `(calls ${calls})` : ''), STEP_RESULT_CHARS),
    ms: step.latencyMs,
    ...(tokens ? { tok: tokens } : {}),
  };
}

function toolDrill(step: AgentToolStep): DrillStep {
  return {
    k: 'tool',
    t: step.tool,
    a: JSON.stringify(step.arguments),
    r: cut(step.result, STEP_RESULT_CHARS),
    ms: step.latencyMs,
    ...(step.isError ? { e: true } : {}),
    ...(step.origin === 'world' ? { w: true } : {}),
  };
}
