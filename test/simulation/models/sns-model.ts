/**
 * The notice topic's one call, in memory: Publish, kept in order so that the simulation can check
 * the notices against the pauses it saw.
 */
import type { SNSClient } from '@aws-sdk/client-sns';
import { createModelClient, type CallGate } from './sqs-fifo-model.js';

export class SnsModel {
  /** Every message published, in order, by topic ARN. */
  readonly published: { readonly topicArn: string; readonly message: string }[] = [];

  execute(operation: string, input: unknown): unknown {
    const { TopicArn, Message } = input as { TopicArn?: string; Message?: string };
    switch (operation) {
      case 'Publish':
        this.published.push({ topicArn: TopicArn ?? '', message: Message ?? '' });
        return { MessageId: String(this.published.length) };
      default:
        throw new Error(`the SNS model has no ${operation}`);
    }
  }
}

/** An SNS client whose `send` answers from the model through `gate`. */
export function createModelSnsClient(model: SnsModel, gate: CallGate): SNSClient {
  return createModelClient<SNSClient>('sns', model, gate);
}
