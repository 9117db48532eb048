/**
 * Reading a request body with a ceiling, for the servers of this repository that stand in front of
 * the API (the local stack's HTTP API, the CLI's console proxy): what is over is read and dropped,
 * never buffered, so that the client still gets its answer on the same connection.
 */
import type { IncomingMessage } from 'node:http';

/** Reads a body up to `capBytes`, draining the rest. */
export async function readCappedBody(request: IncomingMessage, capBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let kept = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    if (kept >= capBytes) continue;
    const part = chunk.subarray(0, capBytes - kept);
    chunks.push(part);
    kept += part.byteLength;
  }
  return Buffer.concat(chunks);
}
