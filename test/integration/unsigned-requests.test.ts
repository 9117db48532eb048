/**
 * The local clients sign nothing (local/unsigned-requests.ts), and the emulators take their
 * requests: dynalite (in process and on its port), fauxqs's SQS and its S3.
 */
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { TABLES } from '../../lambda/resources.js';
import { LOCAL_REGION } from '../../local/emulators.js';
import { UNSIGNED_SIGNATURE } from '../../local/unsigned-requests.js';
import { uniquePrefix } from './support/api.js';
import { useLocalClientPair } from './support/local-clients.js';

const sentRequestSchema = z.looseObject({ request: z.looseObject({ headers: z.record(z.string(), z.string()) }) });

/** A middleware that notes the Authorization header of every request it passes on. */
function recordAuthorizationInto(into: string[]) {
  return <Args, Result>(next: (args: Args) => Promise<Result>) =>
    async (args: Args): Promise<Result> => {
      const sent = sentRequestSchema.safeParse(args);
      into.push(sent.success ? (sent.data.request.headers.authorization ?? '') : '');
      return next(args);
    };
}

/** After the signing (finalizeRequest step): the request as it is sent. */
const AFTER_SIGNING = { step: 'deserialize', name: 'recordAuthorization' } as const;

describe('the local clients', { timeout: 60_000 }, () => {
  const clients = useLocalClientPair();

  it('send no signature, and dynalite answers when it is in process and on its port', async () => {
    const authorizations: string[] = [];
    clients.local().dynamo.middlewareStack.add(recordAuthorizationInto(authorizations), AFTER_SIGNING);
    clients.overSockets().dynamo.middlewareStack.add(recordAuthorizationInto(authorizations), AFTER_SIGNING);
    const settings = TABLES.settings;
    const key = uniquePrefix('unsigned');
    await clients.local().dynamo.send(new PutCommand({ TableName: settings.localName, Item: { [settings.partitionKey]: key, value: 1 } }));
    const { Item } = await clients.overSockets().dynamo.send(new GetCommand({ TableName: settings.localName, Key: { [settings.partitionKey]: key }, ConsistentRead: true }));
    expect(Item).toEqual({ [settings.partitionKey]: key, value: 1 });
    expect(authorizations).toHaveLength(2);
    for (const authorization of authorizations) {
      expect(authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=local/\\d{8}/${LOCAL_REGION}/dynamodb/aws4_request, SignedHeaders=host, Signature=${UNSIGNED_SIGNATURE}$`));
    }
  });

  it('send no signature, and fauxqs answers for SQS and S3', async () => {
    const authorizations: string[] = [];
    clients.local().sqs.middlewareStack.add(recordAuthorizationInto(authorizations), AFTER_SIGNING);
    clients.local().s3.middlewareStack.add(recordAuthorizationInto(authorizations), AFTER_SIGNING);
    const name = uniquePrefix('unsigned');

    const { QueueUrl: queueUrl } = await clients.local().sqs.send(new CreateQueueCommand({ QueueName: name }));
    // fauxqs takes the queue's region from the credential scope of the Authorization header.
    expect(queueUrl).toContain(`sqs.${LOCAL_REGION}.`);
    await clients.local().sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'hello' }));
    const { Messages = [] } = await clients.local().sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 1 }));
    expect(Messages.map((message) => message.Body)).toEqual(['hello']);
    await clients.local().sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: Messages[0]?.ReceiptHandle }));

    await clients.local().s3.send(new CreateBucketCommand({ Bucket: name }));
    // Larger than one 64 KB chunk, as a payload in the payload bucket is (over 350 KB).
    const body = JSON.stringify({ data: 'x'.repeat(400_000) });
    await clients.local().s3.send(new PutObjectCommand({ Bucket: name, Key: 'payload.json', Body: body, ContentType: 'application/json' }));
    const object = await clients.local().s3.send(new GetObjectCommand({ Bucket: name, Key: 'payload.json' }));
    expect(await object.Body?.transformToString('utf-8')).toBe(body);

    expect(authorizations).toHaveLength(7);
    for (const authorization of authorizations) expect(authorization).toMatch(new RegExp(`Credential=local/\\d{8}/${LOCAL_REGION}/(sqs|s3)/aws4_request, SignedHeaders=host, Signature=${UNSIGNED_SIGNATURE}$`));
  });
});
