/**
 * How deeply a JSON text nests, read without parsing it. Code that walks a body recursively
 * (expressions, saving a run's results) overflows the stack on a body nested thousands deep,
 * which fits in a few kilobytes; such a body is refused before anything runs.
 */
export const MAX_JSON_DEPTH = 64;

/** True when `text` nests arrays and objects deeper than `limit`; strings are skipped. */
export function nestsDeeperThan(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
