/**
 * The durable record of an agent copilot's work on one item (issue 34): each model turn and each tool call, stored as it
 * completes, so an activity retried after a dead worker resumes at the step reached; and the tool results a run recorded
 * into its world (a replayable snapshot of what the tools answered).
 */

/** A tool call a model turn asked for, as the loop hands it to a tool. */
export interface AgentToolCall {
  /** The provider's id of the call (tool_call id / tool_use id): the tool result answers it. */
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface AgentUsage {
  promptTokens: number | null;
  completionTokens: number | null;
  cachedTokens: number | null;
}

/** One model turn: what the model said and which tools it called. */
export interface AgentModelStep {
  kind: 'model';
  seq: number;
  /** Model turn number, from 1. */
  turn: number;
  text: string | null;
  toolCalls: AgentToolCall[];
  usage: AgentUsage;
  latencyMs: number;
  startedAt: string;
  finishedAt: string;
}

/** One tool call and its result (an error result too: the model is shown it, as agent frameworks do). */
export interface AgentToolStep {
  kind: 'tool';
  seq: number;
  /** The model turn that asked for it. */
  turn: number;
  callId: string;
  tool: string;
  arguments: Record<string, unknown>;
  result: string;
  isError: boolean;
  /** Where the result came from: the service itself, a recorded world snapshot (replay), or none (not run: over maxToolCalls). */
  origin: 'live' | 'world' | 'limit';
  latencyMs: number;
  startedAt: string;
  finishedAt: string;
}

export type AgentStep = AgentModelStep | AgentToolStep;

/** One stored step, keyed by run, query, copilot and seq (first write wins). */
export interface StoredAgentStep {
  runId: string;
  queryId: string;
  copilot: string;
  step: AgentStep;
}

/** One tool result held by a world recording, keyed by the call's canonical key (tool + arguments). */
export interface WorldCall {
  key: string;
  tool: string;
  /** Arguments in canonical form (keys sorted), as JSON. */
  arguments: string;
  result: string;
  isError: boolean;
  recordedAt: string;
}

/** A recording's summary: which run (or copy) wrote it, and how many calls it holds. */
export interface WorldRecording {
  recording: string;
  calls: number;
  firstAt: string;
  lastAt: string;
}
