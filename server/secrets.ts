import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { isPostgresUrl } from './store/store.js';

/**
 * Seals integration credentials at rest with AES-256-GCM. The key never lives in the database:
 * it comes from FORGE_SECRET_KEY (base64, 32 bytes) or from a key file beside the database,
 * created on first start with owner-only permissions (and refused when others may read or
 * write it). It also seals the token-signing key. An in-memory database gets a key that
 * lives as long as the process.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static open(dbPath: string, envKey = process.env.FORGE_SECRET_KEY): SecretBox {
    if (envKey) {
      const key = Buffer.from(envKey, 'base64');
      if (key.length !== 32)
        throw new Error('FORGE_SECRET_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32).');
      return new SecretBox(key);
    }
    if (dbPath === ':memory:') return new SecretBox(randomBytes(32));
    if (isPostgresUrl(dbPath)) {
      throw new Error(
        'With a PostgreSQL database, set FORGE_SECRET_KEY (openssl rand -base64 32): there is no file beside the database to keep the key in, and every instance needs the same key.',
      );
    }
    const keyFile = `${dbPath}.key`;
    if (!existsSync(keyFile)) {
      writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    }
    // A key others could read may have leaked, one others could write may have been swapped:
    // the operator decides, the service does not quietly trust or repair it.
    const { mode } = statSync(keyFile);
    if (mode & 0o077) {
      throw new Error(
        `The key file ${keyFile} can be read or written by other accounts (mode ${(mode & 0o777).toString(8)}). If nobody else used it, run "chmod 600 ${keyFile}"; otherwise replace the key and the credentials it sealed.`,
      );
    }
    return new SecretBox(Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64'));
  }

  seal(plain: unknown): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(plain), 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join(
      '.',
    );
  }

  open<T>(sealed: string): T {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('Unknown sealed secret format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    const plain = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
    return JSON.parse(plain.toString('utf8')) as T;
  }
}
