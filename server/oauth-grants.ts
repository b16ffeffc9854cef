import { createHash, randomBytes } from 'node:crypto';
import type { SecretBox } from './secrets.js';
import type { Store } from './store/store.js';

/**
 * OAuth bound to the browser that started it (RFC 6749 §10.12, "connect-CSRF").
 *
 * A flow starts with a user token from a page on an allowed origin and gives a one-time
 * authorize link. Whoever finishes the link at the provider does not connect anything by
 * that alone: the callback keeps the provider's grant as *pending* and hands a one-time
 * confirmation value only to the window that opened the popup, by postMessage to that page's
 * exact origin. The element that started the flow sends it back with the user's token; only
 * then does the grant become the user's credential. A stranger who completes someone else's
 * link has no opener on that origin, so the value never reaches anyone and the pending grant
 * expires unused. No cookie is involved, so blocked third-party cookies change nothing.
 */

/** How long the authorize link stays usable (the user may have to sign in at the provider). */
export const OAUTH_STATE_TTL_MS = 10 * 60 * 1000;

/** How long a pending grant waits for the element's confirmation, by default. */
export const PENDING_GRANT_TTL_MS = 5 * 60 * 1000;

const hash = (value: string) => createHash('sha256').update(value).digest('hex');

export interface Flow {
  userId: string;
  integration: string;
  openerOrigin: string;
}

/** Uses the authorize link up: answers its flow the first time only. */
export async function openAuthorizeLink(
  store: Store,
  state: string,
): Promise<(Flow & { sealedFlow: string | null }) | undefined> {
  return (await store.oauth.markStateOpened(state)) ? store.oauth.getState(state) : undefined;
}

/**
 * The provider granted access for a flow: keeps the grant pending and answers the one-time
 * value for the opener. Only its hash is stored.
 */
export async function holdGrant(
  store: Store,
  secrets: SecretBox,
  flow: Flow,
  grant: unknown,
  ttlMs = PENDING_GRANT_TTL_MS,
): Promise<string> {
  const confirmation = randomBytes(32).toString('base64url');
  await store.oauth.createPendingGrant({
    hash: hash(confirmation),
    userId: flow.userId,
    integration: flow.integration,
    openerOrigin: flow.openerOrigin,
    sealedGrant: secrets.seal(grant),
    expiresAt: Date.now() + ttlMs,
  });
  return confirmation;
}

/**
 * The element confirms a pending grant: it must be the same user, integration and page origin
 * that started the flow, within its lifetime, once. Answers when the credential was stored,
 * or undefined when the confirmation matches nothing (all failures look the same).
 */
export async function confirmGrant(
  store: Store,
  confirmation: string,
  expected: { userId: string; integration: string; origin: string | undefined },
  accountOf: (sealedGrant: string) => string | null = () => null,
): Promise<string | undefined> {
  return store.transaction(async (tx) => {
    const pending = await tx.oauth.takePendingGrant(hash(confirmation));
    if (
      !pending ||
      pending.expiresAt < Date.now() ||
      pending.userId !== expected.userId ||
      pending.integration !== expected.integration ||
      pending.openerOrigin !== expected.origin
    ) {
      return undefined;
    }
    return tx.credentials.save(
      pending.userId,
      pending.integration,
      pending.sealedGrant,
      accountOf(pending.sealedGrant),
    );
  });
}
