/**
 * The delivery queue as ingest's tests see it: SQS's SendMessageBatch over an array, refusing the
 * messages a test names (transiently), and numbering the others as SQS does, growing.
 */
import { SendFailureKind, type OutgoingMessage, type SendBatch } from '../../lambda/core/enqueue-plan.js';

export function fakeQueue(isRefused: (message: OutgoingMessage) => boolean = () => false): { readonly queue: OutgoingMessage[]; readonly sendBatch: SendBatch } {
  const queue: OutgoingMessage[] = [];
  const sendBatch: SendBatch = async (entries) => {
    const refused = entries.filter(isRefused);
    const taken = entries.filter((entry) => !refused.includes(entry));
    queue.push(...taken);
    return {
      refused: new Map(refused.map((entry) => [entry.index, { kind: SendFailureKind.transient, code: 'ServiceUnavailable' }])),
      // As SQS: a number per message taken, growing (here across the whole queue).
      sequenceNumbers: new Map(taken.map((entry) => [entry.index, String(queue.indexOf(entry) + 1)])),
    };
  };
  return { queue, sendBatch };
}
