/** A reply that arrived but cannot be read (cut-off or non-JSON body, e.g. a proxy's HTML page): another attempt may help. */
export class ProviderReplyError extends Error {
  constructor(
    message: string,
    readonly raw: string,
  ) {
    super(message);
    this.name = 'ProviderReplyError';
  }
}

/** The whole call (headers and body) took longer than its timeout. */
export class ProviderTimeoutError extends Error {
  constructor(readonly ms: number) {
    super(`no complete answer within the timeout of ${ms} ms`);
    this.name = 'TimeoutError';
  }
}
