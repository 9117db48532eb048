/**
 * The benchmark's webhook receiver: answers each webhook after a fixed latency, refuses every
 * webhook of the poison keys, and checks order per key as it goes. It is the bench's own (not
 * local/webhook-receiver.ts), so that the working tree and a baseline are measured by one receiver.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as z from 'zod';

/** The payload every bench event carries: its key's index and its number within the key. */
export const BenchPayloadSchema = z.object({ key: z.number().int(), n: z.number().int() });
/** One event (docs/api.md#what-a-receiver-gets; its number in `webhook-sequence`), or a batch of them (docs/api.md#batches; each item numbered). */
const BodySchema = z.union([
  z.object({ data: BenchPayloadSchema }),
  z.object({ events: z.array(z.object({ sequence: z.number().int(), data: BenchPayloadSchema })).min(1) }),
]);

/** The receiver's counts. */
export interface OrderTally {
  /** Webhooks accepted in order: each key's events 0, 1, 2, … once each. */
  readonly delivered: number;
  /** An event accepted again after it (at-least-once delivery): allowed, counted apart. */
  readonly duplicates: number;
  /** An event accepted before an earlier event of its key: must stay 0. */
  readonly orderViolations: number;
  /** Webhooks refused (poison keys). */
  readonly refused: number;
}

/**
 * Order bookkeeping per key, apart from HTTP so that a test can drive it: the next event number
 * each key expects.
 */
export class OrderChecker {
  private readonly next = new Map<number, number>();
  private readonly lastSequence = new Map<number, number>();
  private tally = { delivered: 0, duplicates: 0, orderViolations: 0, refused: 0 };

  /**
   * Records an accepted event `n` of key `key` with its `webhook-sequence`: a new event must come
   * next in its key's order and carry a higher sequence than the key's previous one.
   */
  accept(key: number, n: number, sequence: number | undefined): void {
    const expected = this.next.get(key) ?? 0;
    if (n >= expected && sequence !== undefined) {
      const previous = this.lastSequence.get(key) ?? 0;
      this.lastSequence.set(key, sequence);
      if (sequence <= previous) {
        this.tally.orderViolations += 1;
        this.tally.delivered += 1;
        this.next.set(key, n + 1);
        return;
      }
    }
    if (n === expected) {
      this.tally.delivered += 1;
      this.next.set(key, n + 1);
    } else if (n < expected) {
      this.tally.duplicates += 1;
    } else {
      // A later event before an earlier one: the earlier one was skipped or will come after it.
      this.tally.orderViolations += 1;
      this.tally.delivered += 1;
      this.next.set(key, n + 1);
    }
  }

  refuse(): void {
    this.tally.refused += 1;
  }

  /** Events of `key` accepted in order so far. */
  deliveredOf(key: number): number {
    return this.next.get(key) ?? 0;
  }

  get totals(): OrderTally {
    return { ...this.tally };
  }
}

/** A running bench receiver. */
export interface BenchReceiver {
  readonly url: string;
  readonly checker: OrderChecker;
  /** When the last accepted webhook was answered (performance.now()). */
  readonly lastAcceptedAt: () => number;
  /** Called after every accepted webhook. */
  onAccepted: () => void;
  readonly stop: () => Promise<void>;
}

/** Starts the receiver on 127.0.0.1; `poisonKeys` are answered 500, always. */
export async function startBenchReceiver(options: { readonly latencyMs: number; readonly poisonKeys?: ReadonlySet<number> }): Promise<BenchReceiver> {
  const checker = new OrderChecker();
  let lastAcceptedAt = 0;
  const receiver: BenchReceiver = {
    url: '',
    checker,
    lastAcceptedAt: () => lastAcceptedAt,
    onAccepted: () => undefined,
    stop: async () => undefined,
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let parsed: z.infer<typeof BodySchema> | undefined;
      try {
        const body = BodySchema.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        parsed = body.success ? body.data : undefined;
      } catch {
        parsed = undefined;
      }
      const answer = (): void => {
        if (parsed === undefined) {
          response.writeHead(400).end();
          return;
        }
        const headerSequence = Number(request.headers['webhook-sequence']);
        // The key is the endpoint's (`/k<key>`): a fan-out's one payload reaches every key's endpoint.
        const pathKey = /^\/k(\d+)$/.exec(request.url ?? '')?.[1];
        const keyed = (item: { readonly data: z.infer<typeof BenchPayloadSchema>; readonly sequence: number | undefined }) => (pathKey === undefined ? item : { ...item, data: { ...item.data, key: Number(pathKey) } });
        const items = ('events' in parsed ? parsed.events : [{ data: parsed.data, sequence: Number.isInteger(headerSequence) ? headerSequence : undefined }]).map(keyed);
        if (items.some((item) => options.poisonKeys?.has(item.data.key) === true)) {
          checker.refuse();
          response.writeHead(500).end();
          return;
        }
        response.writeHead(204).end();
        for (const item of items) checker.accept(item.data.key, item.data.n, item.sequence);
        lastAcceptedAt = performance.now();
        receiver.onAccepted();
      };
      if (options.latencyMs > 0) setTimeout(answer, options.latencyMs);
      else answer();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  });
}
