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
