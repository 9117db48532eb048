import { ListQueuesCommand } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createDocumentClient, createSqsClient } from '../../../lambda/adapters/aws-clients.js';

const sentRequestSchema = z.looseObject({ request: z.looseObject({ headers: z.record(z.string(), z.string()) }) });
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };

/** Stops a request once signed, before any network, answering with its Authorization header. */
class SignedRequestError extends Error {
  override readonly name = 'SignedRequestError';
  constructor(readonly authorization: string) {
    super('stopped after signing');
  }
}

/** A middleware after the signing (finalizeRequest step) that sends nothing. */
const stopAfterSigning =
  <Args, Result>(_next: (args: Args) => Promise<Result>) =>
  async (args: Args): Promise<Result> => {
    throw new SignedRequestError(sentRequestSchema.parse(args).request.headers.authorization ?? '');
  };

async function authorizationOf(send: () => Promise<unknown>): Promise<string> {
  const error: unknown = await send().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof SignedRequestError)) throw new Error(`expected the request to stop after signing, got ${String(error)}`);
  return error.authorization;
}

describe('aws-clients', () => {
  it('signs every request with SigV4 when no signer is given, as in Lambda', async () => {
    const dynamo = createDocumentClient({ region: 'us-east-1', credentials });
    dynamo.middlewareStack.add(stopAfterSigning, { step: 'deserialize', name: 'stopAfterSigning' });
    const sqs = createSqsClient({ region: 'us-east-1', credentials });
    sqs.middlewareStack.add(stopAfterSigning, { step: 'deserialize', name: 'stopAfterSigning' });

    expect(await authorizationOf(() => dynamo.send(new GetCommand({ TableName: 'Settings', Key: { setting: 'routing' } })))).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/dynamodb\/aws4_request, SignedHeaders=\S+, Signature=[0-9a-f]{64}$/,
    );
    expect(await authorizationOf(() => sqs.send(new ListQueuesCommand({})))).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/sqs\/aws4_request, SignedHeaders=\S+, Signature=[0-9a-f]{64}$/);
  });
});
