/**
 * One simulated HTTP answer as data: what the live endpoints write to their socket and what a batch line records as its
 * response, so a batch line is answered by exactly the code that answers the live call.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface HttpAnswer {
  status: number;
  /** Response headers, content-type included. */
  headers: Record<string, string>;
  /** The body text (JSON, or an SSE stream for a streaming request). */
  body: string;
  /** Send the headers, then nothing for this long (a stalled proxy); live calls only. */
  stallMs?: number;
}

export function jsonAnswer(status: number, data: unknown, headers?: Record<string, string>): HttpAnswer {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(data) };
}

export function writeAnswer(res: ServerResponse, answer: HttpAnswer): void {
  if (answer.stallMs !== undefined) {
    res.writeHead(answer.status, answer.headers);
    res.flushHeaders();
    const timer = setTimeout(() => res.end(), answer.stallMs);
    res.on('close', () => clearTimeout(timer));
    return;
  }
  res.writeHead(answer.status, answer.headers).end(answer.body);
}

export function sendJson(res: ServerResponse, status: number, data: unknown, headers?: Record<string, string>): void {
  writeAnswer(res, jsonAnswer(status, data, headers));
}

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
