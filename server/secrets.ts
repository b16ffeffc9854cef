import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { isPostgresUrl } from './store/store.js';

/**
 * Seals integration credentials at rest with AES-256-GCM. The key never lives in the database:
 * it comes from FORGE_SECRET_KEY (base64, 32 bytes) or from a key file beside the database,
 * created on first start with owner-only permissions (and refused when others may read or
 * write it). It also seals the token-signing key. An in-memory database gets a key that
 * lives as long as the process.
 */
export class SecretBox {
  /**
   * The key as a KeyObject, made once: given as a Buffer, every cipher imports it anew, which
   * was about 70 µs of each 100 µs `open` (an options read opens a credential; issue 26).
   */
  private readonly key: KeyObject;

  private constructor(key: Buffer) {
    this.key = createSecretKey(key);
  }

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
    if (!existsSync(keyFile) && !isLink(keyFile)) {
      writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    }
    return new SecretBox(Buffer.from(readKeyFile(keyFile).trim(), 'base64'));
  }

  /** A value derived from the key for `label` (HMAC-SHA-256): a secret made once with the key, never stored apart. */
  derive(label: string): Buffer {
    return createHmac('sha256', this.key).update(label).digest();
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

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * The key file's text, once it is known to be the service's own: a regular file (not a symlink,
 * which whoever owns it could point elsewhere), owned by the account the service runs as (a file
 * of another account is that account's to change, whatever its mode says now, and a root service
 * would read anything), readable and writable by it alone (a key others could read may have
 * leaked, one others could write may have been swapped). The operator decides; the service does
 * not quietly trust or repair it. Opened without following links and checked on the open file,
 * so nothing can be swapped in between.
 */
function readKeyFile(keyFile: string): string {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO put there is refused below instead of holding the start.
    fd = openSync(keyFile, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOOP') throw error;
    throw new Error(
      `The key file ${keyFile} is a symbolic link. Put the key itself there, as a regular file (mode 600, owned by the account the service runs as), or set FORGE_SECRET_KEY.`,
    );
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      throw new Error(
        `The key file ${keyFile} is not a regular file. Put the key there as one (mode 600), or set FORGE_SECRET_KEY.`,
      );
    }
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid) {
      throw new Error(
        `The key file ${keyFile} belongs to another account (uid ${stat.uid}), not to the one the service runs as (uid ${uid}). If the key is yours, run "chown ${uid} ${keyFile}"; otherwise replace the key and the credentials it sealed.`,
      );
    }
    if (stat.mode & 0o077) {
      throw new Error(
        `The key file ${keyFile} can be read or written by other accounts (mode ${(stat.mode & 0o777).toString(8)}). If nobody else used it, run "chmod 600 ${keyFile}"; otherwise replace the key and the credentials it sealed.`,
      );
    }
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}
