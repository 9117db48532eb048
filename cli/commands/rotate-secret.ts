/**
 * `rotate-secret`: gives a subscription a new signing secret while the previous one keeps signing
 * for a grace (`POST /v1/subscriptions/{subscription_id}/secret/rotate`), so that its receiver can
 * switch secrets without refusing a webhook.
 */
import { pathSegment } from '../api/client.js';
import { rotateSecretAnswerSchema } from '../api/schemas.js';
import { connect, type Command } from '../command.js';
import { parseDurationMs } from '../duration.js';
import { UsageError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { COMMON_OPTIONS, parseOptions, requireOption } from '../options.js';
import { writeJson, writeLine } from '../output/stream.js';

const OPTIONS = { ...COMMON_OPTIONS, subscription: { type: 'string' }, secret: { type: 'string' }, grace: { type: 'string' } } as const;

/** `--grace` in whole seconds, as the API takes it; 0 is allowed (the previous secret stops at once). */
function graceSeconds(value: string): number {
  const ms = parseDurationMs(value);
  if (ms === undefined || ms % 1_000 !== 0) throw new UsageError(`--grace must be a whole number of seconds such as 0, 90s, 30m or 24h (got "${value}").`);
  return ms / 1_000;
}

export const rotateSecretCommand: Command = {
  name: 'rotate-secret',
  summary: "give a subscription a new signing secret; the old one keeps signing for a grace",
  help: `Usage: ordered-webhooks rotate-secret --subscription <subscription_id> [--secret <whsec_…>] [--grace <duration>] [--json]

Rotates the subscription's signing secret (POST /v1/subscriptions/{subscription_id}/secret/rotate)
and prints the new one when the API generated it (a --secret you gave is not printed back). Until
the grace ends every webhook is signed with both secrets, so the receiver verifies with either;
after it, with the new one alone. The previous secret is never printed; \`ordered-webhooks secret\`
reads the secrets in force.

Options:
  --subscription <id>   the subscription (required)
  --secret <whsec_…>    the new secret (default: the API generates one)
  --grace <duration>    how long the previous secret keeps signing (default 24h; 0 ends it at once)`,
  run: async (args, io) => {
    const values = parseOptions(args, OPTIONS);
    const subscriptionId = requireOption('subscription', values.subscription);
    const body = {
      ...(values.secret === undefined ? {} : { secret: values.secret }),
      ...(values.grace === undefined ? {} : { grace_seconds: graceSeconds(values.grace) }),
    };
    const answer = await connect(values, io).send(
      { method: 'POST', path: `/v1/subscriptions/${pathSegment(subscriptionId)}/secret/rotate`, body },
      rotateSecretAnswerSchema,
    );
    if (values.json === true) writeJson(io.stdout, answer);
    else {
      // The API answers a secret only when it generated it: one given with --secret is the caller's already.
      writeLine(io.stdout, answer.secret === undefined ? `The given secret of ${answer.subscription_id} signs from now on.` : `New secret of ${answer.subscription_id}: ${answer.secret}`);
      writeLine(io.stdout, `The previous secret keeps signing until ${answer.previous_secret_expires_at}.`);
    }
    return ExitCode.ok;
  },
};
