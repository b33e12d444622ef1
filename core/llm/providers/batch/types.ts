import type { ProviderId } from '../profile';

/** One request of a batch: the body is what the live call would send (OpenAI: a chat completions body; Anthropic: Messages params). */
export interface BatchLine {
  customId: string;
  body: Record<string, unknown>;
}

/** Normalised state of a batch, whichever provider runs it. */
export type BatchState =
  'validating' | 'in_progress' | 'finalizing' | 'completed' | 'failed' | 'expired' | 'cancelling' | 'cancelled';

export interface BatchStatus {
  id: string;
  state: BatchState;
  /** True once the provider will process no more of its lines (completed, failed, expired, cancelled; Anthropic "ended"). */
  ended: boolean;
  counts: { total: number; succeeded: number; failed: number; pending: number };
  /** A batch-level failure in the provider's words (e.g. OpenAI validation `errors`), when there is one. */
  error?: string;
}

export type BatchLineResult =
  | { customId: string; ok: true; body: Record<string, unknown> /* the chat completion, or the Anthropic Message */ }
  | { customId: string; ok: false; kind: 'errored' | 'expired' | 'canceled'; error: string /* the provider's words */ };

export interface BatchEndpoint {
  baseURL: string;
  apiKeyEnv?: string;
  /** Inferred from the host like core/llm/providers/index.ts profileOf when absent. */
  provider?: ProviderId;
  timeoutMs: number;
}

export interface BatchClient {
  /**
   * Submit the lines as one batch tagged `tag` (OpenAI: upload the JSONL file named after the tag, unless a file of
   * that name is there already, then create the batch with metadata {judgeflow_tag: tag}). A retried submit first
   * asks `find` (activities/judgeBatch.ts).
   */
  submit(lines: BatchLine[], tag: string): Promise<BatchStatus>;
  /**
   * After a submit whose reply may have been lost (a worker killed while the create call was in flight): the batches
   * that submit may have made since `sinceMs`, oldest first. OpenAI: by the tag in their metadata, else (a host whose
   * list leaves metadata out) by their input file, named after the tag. Anthropic (no metadata): batches created
   * since then holding as many requests.
   */
  find(lines: BatchLine[], tag: string, sinceMs: number): Promise<BatchStatus[]>;
  status(id: string): Promise<BatchStatus>;
  /**
   * Every line's result once the batch ended (OpenAI: the output and error files; Anthropic: results_url). Lines the
   * provider never reported come back as { ok:false, kind:'expired' } (kind 'canceled' when the batch was cancelled)
   * only if the caller passes their ids in `expected`.
   */
  results(id: string, expected?: string[]): Promise<BatchLineResult[]>;
  cancel(id: string): Promise<BatchStatus>;
}
