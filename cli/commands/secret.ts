/**
 * `secret`: prints a subscription's signing secrets in force (`GET /v1/subscriptions/{subscription_id}/secret`),
 * the one route that answers a stored secret: deployed, it is granted apart from reading
 * subscriptions, so whoever runs this needs that grant.
 */
import { pathSegment } from '../api/client.js';
import { subscriptionSecretAnswerSchema } from '../api/schemas.js';
import { connect, type Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { COMMON_OPTIONS, parseOptions, requireOption } from '../options.js';
import { writeJson, writeLine } from '../output/stream.js';

const OPTIONS = { ...COMMON_OPTIONS, subscription: { type: 'string' } } as const;

export const secretCommand: Command = {
  name: 'secret',
  summary: "print a subscription's signing secret (and the previous one during a rotation's grace)",
  help: `Usage: ordered-webhooks secret --subscription <subscription_id> [--json]

Prints the subscription's signing secret (GET /v1/subscriptions/{subscription_id}/secret), the one a
receiver verifies webhooks with, and during a rotation's grace the previous one, which still signs
until the time shown. No other command or route shows a stored secret; deployed, this route is
granted on its own (grantReadSecrets).

Options:
  --subscription <id>   the subscription (required)`,
  run: async (args, io) => {
    const values = parseOptions(args, OPTIONS);
    const subscriptionId = requireOption('subscription', values.subscription);
    const answer = await connect(values, io).send({ method: 'GET', path: `/v1/subscriptions/${pathSegment(subscriptionId)}/secret` }, subscriptionSecretAnswerSchema);
    if (values.json === true) writeJson(io.stdout, answer);
    else {
      writeLine(io.stdout, `Secret of ${subscriptionId}: ${answer.secret}`);
      if (answer.previous_secret !== undefined) {
        writeLine(io.stdout, `Previous secret, signing beside it until ${answer.previous_secret_expires_at ?? 'the end of its grace'}: ${answer.previous_secret}`);
      }
    }
    return ExitCode.ok;
  },
};
