import { html } from 'lit';
import { type ForgeApiError, ORIGIN_NOT_ALLOWED } from '../api/embed-client.js';
import { TokenError } from '../errors.js';

/**
 * What the elements tell the end user when something fails: plain words, no addresses, codes or
 * setting names. The failure's own message, written for the host's developer, goes in the
 * `forge-error` event and behind a "Technical details" disclosure.
 */
export interface ProblemStrings {
  /** The service or the page could not be reached. */
  problemConnection: string;
  /** No user token: the user's session with the host's app ended, or it could not be confirmed. */
  problemSession: string;
  /**
   * Anything else: the service failed or refused what was asked, or the page is not set up for it
   * (a missing setting, an origin the service does not allow), which the user cannot change.
   */
  problemOther: string;
  /** The disclosure that holds the failure's message for developers. */
  technicalDetails: string;
}

export const defaultProblemStrings: ProblemStrings = {
  problemConnection: 'Check your connection, then try again.',
  problemSession: 'Reload the page, then try again.',
  problemOther: 'Something went wrong. If it keeps happening, contact support.',
  technicalDetails: 'Technical details',
};

/**
 * The plain words for a failure: no answer (status 0) is the connection, unless the service
 * refused the page's origin; no user token, or one the service refused (401), the session.
 */
export function plainWords(t: ProblemStrings, error: unknown): string {
  const { status, title } = error as ForgeApiError;
  if (status === 0 && title !== ORIGIN_NOT_ALLOWED) return t.problemConnection;
  return error instanceof TokenError || status === 401 ? t.problemSession : t.problemOther;
}

/** The failure's message for developers, closed under "Technical details", as the Runs view has it. */
export const technicalDetails = (t: ProblemStrings, error: unknown) =>
  html`<details><summary>${t.technicalDetails}</summary>${(error as Error).message}</details>`;
