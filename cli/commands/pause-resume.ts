/**
 * `pause` and `resume`: stop delivering a subscription's events, in order, and deliver them again
 * from each key's head (`POST /v1/subscriptions/{subscription_id}/pause` and `/resume`).
 */
import { pathSegment } from '../api/client.js';
import { pauseAnswerSchema, resumeAnswerSchema } from '../api/schemas.js';
import { aboutSubscription } from '../api/subscriptions.js';
import { connect, type Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { COMMON_OPTIONS, parseOptions, requireOption } from '../options.js';
import { writeJson, writeLine } from '../output/stream.js';

export const pauseCommand: Command = {
  name: 'pause',
  summary: "stop delivering a subscription's events; they are accepted and wait in order",
  help: `Usage: ordered-webhooks pause --subscription <subscription_id> [--reason <text>] [--json]

Pauses the subscription (POST /v1/subscriptions/{subscription_id}/pause): none of its events is
attempted and no attempt is counted; new events are still accepted and wait, in order, behind
each key's head. A batch already being delivered when the pause is answered finishes (at most one
receive of each of its keys). Pausing a paused subscription keeps the pause in force, its time
and reason, and prints it. In partition mode, the other keys of the subscription's partitions wait with it.

Options:
  --subscription <id>   the subscription (required)
  --reason <text>       why, shown by GET /v1/subscriptions/{id} and the lag view (1 to 256 characters)`,
  run: async (args, io) => {
    const values = parseOptions(args, { ...COMMON_OPTIONS, subscription: { type: 'string' }, reason: { type: 'string' } } as const);
    const subscriptionId = requireOption('subscription', values.subscription);
    const body = values.reason === undefined ? {} : { reason: values.reason };
    const api = connect(values, io);
    const answer = await aboutSubscription(subscriptionId, api.send({ method: 'POST', path: `/v1/subscriptions/${pathSegment(subscriptionId)}/pause`, body }, pauseAnswerSchema));
    if (values.json === true) writeJson(io.stdout, answer);
    else writeLine(io.stdout, `Subscription ${answer.subscription_id} is paused since ${answer.paused_at} (${answer.pause_reason}). Resume it with: ordered-webhooks resume --subscription ${subscriptionId}`);
    return ExitCode.ok;
  },
};

export const resumeCommand: Command = {
  name: 'resume',
  summary: 'deliver a paused subscription again, from each key\'s head, in order',
  help: `Usage: ordered-webhooks resume --subscription <subscription_id> [--json]

Resumes the subscription (POST /v1/subscriptions/{subscription_id}/resume) and lets go every
message group held for its pause: each key goes on from its head, in order, within seconds.
A backlog parked during the pause (PAUSE_EVACUATION=store) is sent back first, before any later
event of its keys: this call sends a first part, the lag job the rest within minutes.
Resuming a subscription that is not paused only records the time, and lets go any group an
interrupted resume left held.

Options:
  --subscription <id>   the subscription (required)`,
  run: async (args, io) => {
    const values = parseOptions(args, { ...COMMON_OPTIONS, subscription: { type: 'string' } } as const);
    const subscriptionId = requireOption('subscription', values.subscription);
    const api = connect(values, io);
    const answer = await aboutSubscription(subscriptionId, api.send({ method: 'POST', path: `/v1/subscriptions/${pathSegment(subscriptionId)}/resume` }, resumeAnswerSchema));
    if (values.json === true) writeJson(io.stdout, answer);
    else {
      const groups = answer.released_groups === 1 ? '1 held group' : `${answer.released_groups} held groups`;
      const unparked = answer.unparked_events ?? 0;
      const sentBack = unparked === 0 ? '' : `; ${unparked === 1 ? '1 parked event' : `${unparked} parked events`} sent back first`;
      writeLine(io.stdout, `Subscription ${answer.subscription_id} resumed at ${answer.resumed_at}; ${groups} let go${sentBack}.`);
    }
    return ExitCode.ok;
  },
};
