import type { MetricMeter } from '@temporalio/common';
import { callCostUsd, type Pricing } from '../core/stats/cost';
import type { ResultsStore } from '../core/model/store';
import type { LlmCallRecord } from '../core/model/types';

/**
 * judgeflow's own Prometheus metrics, through the Temporal runtime's metric meter: they are served on the same
 * `/metrics` endpoint as Temporal's worker metrics (`judgeflow worker --metrics-port`), and cost nothing when no
 * exporter is configured. Every LLM call a worker makes is recorded in the store (putLlmCall), so the store is where
 * they are counted: one place for copilots, judges, panels, grounding and batch lines alike.
 */
export function instrumentedStore(store: ResultsStore, meter: MetricMeter): ResultsStore {
  const calls = meter.createCounter(
    'judgeflow_llm_calls',
    'calls',
    'LLM calls by role, endpoint name and outcome (ok, reused: answered from the store, or the failure kind: rate_limited, http, timeout, quota, invalid_answer, …)',
  );
  const throttled = meter.createCounter(
    'judgeflow_llm_rate_limited',
    'calls',
    'calls answered HTTP 429 (the limiter slows down and asks again)',
  );
  const tokens = meter.createCounter(
    'judgeflow_llm_tokens',
    'tokens',
    'prompt and completion tokens by role and endpoint name',
  );
  const spend = meter.createCounter(
    'judgeflow_spend_microusd',
    'microusd',
    "estimated spend in millionths of a USD at the run's pricing (calls of unpriced endpoints count 0)",
  );
  const pricing = new Map<string, Promise<Pricing>>();
  const pricingOf = (runId: string) => {
    let p = pricing.get(runId);
    if (!p)
      pricing.set(
        runId,
        (p = store.getRun(runId).then(
          (r) => ((r?.config as { pricing?: Pricing } | null)?.pricing ?? {}) as Pricing,
          () => ({}) as Pricing,
        )),
      );
    return p;
  };
  const record = async (call: LlmCallRecord) => {
    const tags = { role: call.role, name: call.name };
    // An answer reused from the store was never sent: counted as such, no tokens, no spend.
    calls.add(1, { ...tags, outcome: call.reused ? 'reused' : call.ok ? 'ok' : (call.errorKind ?? 'failed') });
    if (call.reused) return;
    if (call.errorKind === 'rate_limited') throttled.add(1, tags);
    if (call.promptTokens) tokens.add(call.promptTokens, { ...tags, kind: 'prompt' });
    if (call.completionTokens) tokens.add(call.completionTokens, { ...tags, kind: 'completion' });
    // Priced as the budget and the report price it (core/stats/cost.ts), estimated tokens and batch prices included.
    const usd = callCostUsd(await pricingOf(call.runId), call);
    if (usd) spend.add(Math.round(usd * 1e6), tags);
  };
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'putLlmCall')
        return async (call: LlmCallRecord) => {
          const stored = await target.putLlmCall(call);
          await record(call).catch(() => undefined); // a metric never fails a call's record
          return stored;
        };
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
