import { ForgeApiError } from '../api/client.js';
import type { ForgeErrorCode } from '../events.js';
import { ConfigError } from '../forge-element.js';
import { TokenError } from '../token/token-source.js';
import { OAuthError } from './oauth-popup.js';
import { WorkflowNotOfferedError } from './setup.js';
import type { ConfigModalStrings } from './strings.js';

/** What `forge-error` carries, and what the modal shows. */
export interface Failure {
  code: ForgeErrorCode;
  message: string;
  status?: number;
}

/**
 * Puts any failure in the modal's words. Token and configuration errors keep their own
 * messages (they say what the host developer must change); the service's problem documents
 * give their `detail`; `fallback` is the code for everything else.
 */
export function describeFailure(
  error: unknown,
  text: ConfigModalStrings,
  fallback: ForgeErrorCode,
  integrationName = '',
): Failure {
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
  if (cause instanceof TokenError) {
    return { code: cause.code, message: cause.message, ...(cause.status ? { status: cause.status } : {}) };
  }
  if (cause instanceof ConfigError) return { code: 'config', message: cause.message };
  if (cause instanceof WorkflowNotOfferedError) {
    return { code: 'load-failed', message: text.workflowNotOffered(cause.workflowId), status: 404 };
  }
  if (cause instanceof OAuthError) {
    const name = integrationName;
    const messages: Record<OAuthError['code'], () => string> = {
      'oauth-blocked': () => text.oauthBlocked(name),
      'oauth-closed': () => text.oauthClosed(name),
      'oauth-timeout': () => text.oauthTimeout(name),
      'oauth-denied': () => text.oauthDenied(name),
      'connect-failed': () => text.connectFailed(name, cause.reason),
    };
    return { code: cause.code, message: messages[cause.code]() };
  }
  const reason =
    cause instanceof ForgeApiError
      ? cause.detail || cause.title
      : cause instanceof Error
        ? cause.message
        : String(cause);
  const status = cause instanceof ForgeApiError && cause.status ? { status: cause.status } : {};
  const message = fallback === 'connect-failed' ? text.connectFailed(integrationName, reason) : reason;
  return { code: fallback, message, ...status };
}
