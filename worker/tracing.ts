import crypto from 'node:crypto';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { ResultsStore } from '../core/model/store';
import type { LlmCallRecord, StoredJudgment } from '../core/model/types';

/**
 * OpenTelemetry traces of runs, exported over OTLP (HTTP) when OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; nothing is loaded or exported otherwise.
 *
 * One trace per run, whose id is derived from the run id: every activity span (Temporal's own
 * OpenTelemetryActivityInboundInterceptor) and every LLM call span of a run joins it, whichever worker or machine ran
 * the activity, without adding a workflow interceptor to the workflow bundle (which would change every build id and
 * the histories' shape). The run's root span, `RunWorkflow:benchmarkRun`, is written when the run's record is
 * finished, with the start and end the store holds.
 *
 * Each LLM call is a span `chat <model>` carrying the GenAI semantic-convention attributes (gen_ai.operation.name,
 * gen_ai.request.model, gen_ai.usage.input_tokens/output_tokens, error.type); each judgment is a
 * `gen_ai.evaluation.result` event with its score.
 */
export interface RunTracing {
  activityInterceptors: ActivityInterceptorsFactory[];
  instrument(store: ResultsStore): ResultsStore;
  shutdown(): Promise<void>;
}

const hex = (seed: string, chars: number) => crypto.createHash('sha256').update(seed).digest('hex').slice(0, chars);
/** The run's trace id and its root span's id, the same on every worker. */
export const runTraceIds = (runId: string) => ({
  traceId: hex(`judgeflow-trace:${runId}`, 32),
  spanId: hex(`judgeflow-root:${runId}`, 16),
});

let processTracing: RunTracing | null | undefined;
/** This process's tracing (set up once: the tracer provider and context manager are global). */
export function workerTracing(env: NodeJS.ProcessEnv = process.env): RunTracing | null {
  if (processTracing === undefined) processTracing = runTracing(env);
  return processTracing;
}

function runTracing(env: NodeJS.ProcessEnv): RunTracing | null {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return null;
  const api = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  const { BasicTracerProvider, BatchSpanProcessor, RandomIdGenerator } =
    require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { Resource } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { AsyncLocalStorageContextManager } =
    require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks');
  const { OpenTelemetryActivityInboundInterceptor } =
    require('@temporalio/interceptors-opentelemetry/lib/worker') as typeof import('@temporalio/interceptors-opentelemetry/lib/worker');

  // A root span must carry the run's ids: the generator hands them out once when asked to (`forced`), random otherwise.
  const random = new RandomIdGenerator();
  let forced: { traceId: string; spanId: string } | null = null;
  const idGenerator = {
    generateTraceId: () => forced?.traceId ?? random.generateTraceId(),
    generateSpanId: () => forced?.spanId ?? random.generateSpanId(),
  };
  const provider = new BasicTracerProvider({
    resource: new Resource({ 'service.name': env.OTEL_SERVICE_NAME ?? 'judgeflow-worker' }),
    idGenerator,
  });
  provider.addSpanProcessor(new BatchSpanProcessor(new OTLPTraceExporter(), { scheduledDelayMillis: 1_000 }));
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer('judgeflow');

  const runContext = (runId: string) =>
    api.trace.setSpanContext(api.ROOT_CONTEXT, {
      ...runTraceIds(runId),
      traceFlags: api.TraceFlags.SAMPLED,
      isRemote: true,
    });
  const activeOr = (runId: string) =>
    api.trace.getSpan(api.context.active()) ? api.context.active() : runContext(runId);

  const callSpan = (call: LlmCallRecord) => {
    const end = Date.parse(call.at) || Date.now();
    const span = tracer.startSpan(
      `chat ${call.model ?? call.name}`,
      {
        kind: api.SpanKind.CLIENT,
        startTime: end - call.latencyMs,
        attributes: {
          'gen_ai.operation.name': 'chat',
          ...(call.model ? { 'gen_ai.request.model': call.model } : {}),
          ...(call.promptTokens !== null ? { 'gen_ai.usage.input_tokens': call.promptTokens } : {}),
          ...(call.completionTokens !== null ? { 'gen_ai.usage.output_tokens': call.completionTokens } : {}),
          ...(call.errorKind ? { 'error.type': call.errorKind } : {}),
          'judgeflow.role': call.role,
          'judgeflow.endpoint': call.name,
          'judgeflow.run_id': call.runId,
          ...(call.queryId ? { 'judgeflow.query_id': call.queryId } : {}),
          ...(call.batch ? { 'judgeflow.batch': true } : {}),
        },
      },
      activeOr(call.runId),
    );
    if (!call.ok) span.setStatus({ code: api.SpanStatusCode.ERROR, message: call.errorKind ?? 'failed' });
    span.end(end);
  };

  const judgmentEvents = (judgments: StoredJudgment[]) => {
    for (const j of judgments) {
      const span = tracer.startSpan(
        `evaluate ${j.copilot}`,
        {
          attributes: { 'judgeflow.run_id': j.runId, 'judgeflow.query_id': j.queryId, 'judgeflow.copilot': j.copilot },
        },
        activeOr(j.runId),
      );
      span.addEvent('gen_ai.evaluation.result', {
        'gen_ai.evaluation.name': `judgeflow:${j.rubricVersion}`,
        ...(j.total !== null ? { 'gen_ai.evaluation.score.value': j.total } : {}),
        'gen_ai.evaluation.score.label': j.status,
        ...(j.error ? { 'error.type': j.error.slice(0, 200) } : {}),
      });
      span.end();
    }
  };

  const rootSpan = async (store: ResultsStore, runId: string, status: string, finishedAt: string) => {
    const run = await store.getRun(runId);
    forced = runTraceIds(runId);
    try {
      const span = tracer.startSpan('RunWorkflow:benchmarkRun', {
        root: true,
        startTime: Date.parse(run?.startedAt ?? finishedAt),
        attributes: {
          'judgeflow.run_id': runId,
          'judgeflow.status': status,
          ...(run ? { 'judgeflow.protocol': run.protocol } : {}),
        },
      });
      span.end(Date.parse(finishedAt));
    } finally {
      forced = null;
    }
  };

  return {
    activityInterceptors: [
      (ctx) => ({
        inbound: {
          // Outermost: every activity of a run runs inside the run's trace, so Temporal's interceptor (next) parents its span there.
          execute: (input, next) =>
            ctx.info.workflowExecution
              ? api.context.with(runContext(ctx.info.workflowExecution.workflowId), () => next(input))
              : next(input),
        },
      }),
      (ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }) }),
    ],
    instrument: (store) =>
      new Proxy(store, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver);
          if (typeof value !== 'function') return value;
          const method = value.bind(target);
          if (key === 'putLlmCall') return async (call: LlmCallRecord) => (await method(call), void callSpan(call));
          if (key === 'putJudgment') return async (j: StoredJudgment) => (await method(j), void judgmentEvents([j]));
          if (key === 'putJudgments')
            return async (js: StoredJudgment[]) => (await method(js), void judgmentEvents(js));
          if (key === 'finishRun')
            return async (runId: string, status: string, ...rest: unknown[]) => {
              await method(runId, status, ...rest);
              await rootSpan(target, runId, status, (rest[2] as string | undefined) ?? new Date().toISOString()).catch(
                () => undefined,
              );
            };
          return method;
        },
      }),
    shutdown: () => provider.shutdown(),
  };
}
