/**
 * Signing secrets in the Standard Webhooks form: `whsec_` + base64 of 24 to 64 random bytes.
 */
import * as z from 'zod';

export const SECRET_PREFIX = 'whsec_';
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;
/** Bytes of a generated secret: 256 bits, as most webhook platforms give. */
const GENERATED_SECRET_BYTES = 32;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Whether `secret` is `whsec_` + canonical base64 of 24 to 64 bytes. */
export function isValidSecret(secret: string): boolean {
  if (!secret.startsWith(SECRET_PREFIX)) return false;
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!BASE64.test(encoded) || encoded.length % 4 !== 0) return false;
  const bytes = Buffer.from(encoded, 'base64');
  return bytes.toString('base64') === encoded && bytes.length >= MIN_SECRET_BYTES && bytes.length <= MAX_SECRET_BYTES;
}

export const secretSchema = z
  .string()
  .refine(isValidSecret, `must be "${SECRET_PREFIX}" followed by base64 of ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes`)
  // What the API document shows of the check, which JSON Schema cannot express whole (the byte count).
  .meta({ description: `"${SECRET_PREFIX}" followed by base64 of ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} random bytes.`, pattern: `^${SECRET_PREFIX}[A-Za-z0-9+/]+={0,2}$` });

/**
 * A new secret. `randomBytes` must be a CSPRNG (node:crypto's `randomBytes`); it is a parameter so
 * that the core stays free of hidden randomness.
 */
export function generateSecret(randomBytes: (size: number) => Uint8Array): string {
  return SECRET_PREFIX + Buffer.from(randomBytes(GENERATED_SECRET_BYTES)).toString('base64');
}

/**
 * How long the previous secret keeps signing after a rotation when the request does not say: 24 h,
 * as Svix gives, long enough for a receiver's deploy to pick up the new secret.
 */
export const DEFAULT_ROTATION_GRACE_SECONDS = 24 * 60 * 60;
/** The longest grace a rotation may ask for: 7 days. Two secrets live no longer than that. */
export const MAX_ROTATION_GRACE_SECONDS = 7 * 24 * 60 * 60;

/**
 * A subscription's signing keys: its secret, and after a rotation the previous one with the end of
 * its grace (ISO 8601). An expired previous secret may still be stored; it never signs.
 */
export interface SigningKeys {
  readonly secret: string;
  readonly previous_secret?: string | undefined;
  readonly previous_secret_expires_at?: string | undefined;
}

/**
 * The secrets that sign an attempt made at `at`: the current one first, then the previous one
 * while `at` is before the end of its grace. Each gives its own `v1,` signature (Standard Webhooks
 * lets a receiver accept any of them), so a receiver verifying with either secret keeps working.
 */
export function signingSecrets(keys: SigningKeys, at: Date): readonly [string, ...string[]] {
  const { secret, previous_secret: previous, previous_secret_expires_at: expiresAt } = keys;
  const isPreviousValid = previous !== undefined && expiresAt !== undefined && at.getTime() < Date.parse(expiresAt);
  return isPreviousValid ? [secret, previous] : [secret];
}

/**
 * The secrets in force at `at`, as `GET /v1/subscriptions/{subscription_id}/secret` answers them:
 * the current one, and the previous one with the end of its grace only while it still signs (see
 * {@link signingSecrets}), so a receiver is never told to accept a secret that no longer signs.
 */
export function secretsInForce(keys: SigningKeys, at: Date): SigningKeys {
  const [secret, previous] = signingSecrets(keys, at);
  return previous === undefined ? { secret } : { secret, previous_secret: previous, previous_secret_expires_at: keys.previous_secret_expires_at };
}

/** The end of the previous secret's grace for a rotation at `rotatedAt`; 0 s ends it at once. */
export function previousSecretExpiry(rotatedAt: Date, graceSeconds: number): Date {
  return new Date(rotatedAt.getTime() + graceSeconds * 1000);
}
