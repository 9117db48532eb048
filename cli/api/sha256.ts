/**
 * SHA-256 and HMAC-SHA-256 from node:crypto, in the shape SigV4's signer asks for (the
 * `Checksum` of the AWS SDK), so that no browser-oriented hashing package is needed.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';

type SourceData = string | ArrayBuffer | ArrayBufferView;

function toBuffer(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

/** An HMAC when constructed with a secret, a plain hash otherwise; `reset` starts over with the same secret. */
export class NodeSha256 {
  private readonly secret: Buffer | undefined;
  private hash: Hash | Hmac;

  constructor(secret?: SourceData) {
    this.secret = secret === undefined ? undefined : toBuffer(secret);
    this.hash = this.start();
  }

  update(data: SourceData): void {
    this.hash.update(toBuffer(data));
  }

  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }

  reset(): void {
    this.hash = this.start();
  }

  private start(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', this.secret);
  }
}
