import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { escapeHtml, HTML_HEADERS } from '../http.js';

/**
 * The small HTML pages of the OAuth popup: the service's own (an expired link, the callback
 * page) and the local provider's consent page share one look.
 */

/** The query of the popup's pages (the provider's answer, on the callback). */
export const OAuthQuerySchema = Type.Object({
  state: Type.Optional(Type.String({ description: 'The one-time state of the flow.' })),
  code: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
  redirect_uri: Type.Optional(Type.String()),
});
export const HtmlPage = {
  description: 'An HTML page for the OAuth popup.',
  content: { 'text/html': { schema: Type.String() } },
};
export const Redirect = { description: 'A redirect to the next page of the OAuth flow.', type: 'null' };

export function sendPage(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).headers(HTML_HEADERS).send(html);
}

export function expiredLink(reply: FastifyReply): FastifyReply {
  return sendPage(
    reply,
    400,
    page(
      'This link has expired',
      '<p>This sign-in link was already used or has expired. Close this window and choose Connect again.</p>',
    ),
  );
}

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: Canvas; color: CanvasText; }
  main { max-width: 26rem; padding: 2rem; }
  h1 { font-size: 1.25rem; margin: 0 0 .75rem; }
  p { line-height: 1.5; }
  form { display: flex; gap: .75rem; margin-top: 1.5rem; }
  button { font: inherit; padding: .6rem 1.25rem; border-radius: .5rem; border: 1px solid #8886; background: transparent; color: inherit; cursor: pointer; }
  button.primary { background: #4f46e5; border-color: #4f46e5; color: white; }
  button:focus-visible { outline: 3px solid #818cf8; outline-offset: 2px; }
</style></head>
<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}
