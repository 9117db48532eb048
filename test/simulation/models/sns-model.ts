/**
 * The notice topic's one call, in memory: Publish, kept in order so that the simulation can check
 * the notices against the pauses it saw.
 */
import type { SNSClient } from '@aws-sdk/client-sns';
import type { CallGate } from './sqs-fifo-model.js';

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
  const client = {
    send: (command: { constructor: { name: string }; input: unknown }) => {
      const operation = command.constructor.name.replace(/Command$/, '');
      return gate({ service: 'sns', operation, input: command.input }, () => model.execute(operation, command.input));
    },
    destroy: () => undefined,
  };
  // The handlers call `send` only; the model stands in for the whole client type.
  return client as unknown as SNSClient;
}
