import { InvalidInputError } from './errors.js';

/**
 * The one form an e-mail is stored and compared in, so that uniqueness holds for what a person
 * reads as the same address: Unicode compatibility-composed (NFKC: a precomposed "é" and "e" +
 * combining accent are one letter, a fullwidth "ａ" is "a"), lower case, and no trailing dot on
 * the domain ("example.com." names example.com). Invisible and control characters (a zero-width
 * space, a right-to-left override) are refused rather than dropped: the caller learns that what
 * they sent is not what they typed.
 */
export function normalizeEmail(raw: string, path = 'body.email'): string {
  const invisible = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.exec(raw.trim());
  if (invisible) {
    const code = `U+${invisible[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    const message = `The e-mail holds an invisible or control character (${code}); send it without one.`;
    throw new InvalidInputError(message, [{ path, message }]);
  }
  const folded = raw.trim().normalize('NFKC').toLowerCase().normalize('NFKC');
  const at = folded.lastIndexOf('@');
  return `${folded.slice(0, at)}@${folded.slice(at + 1).replace(/\.+$/, '')}`;
}
