import { waitUntil as waitUntilOneSecond } from '@open-wc/testing';

/**
 * `waitUntil` with ten seconds instead of one. What the tests wait for goes through the real
 * service and token endpoint, which on a 2-core machine running three engines at once can take
 * over a second; a longer wait only makes a failure slower to report, never a pass wrong.
 */
export const waitUntil: typeof waitUntilOneSecond = (predicate, message, options = {}) =>
  waitUntilOneSecond(predicate, message, { timeout: 10_000, ...options });
