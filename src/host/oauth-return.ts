/**
 * The OAuth return page a host serves on its own origin, for sign-in windows whose consent page
 * cuts them from the page that opened them (`Cross-Origin-Opener-Policy: same-origin`, as
 * Microsoft's login pages send): `window.opener` is then gone, so the service's callback sends the
 * window here instead, with the result in the URL fragment (which never reaches a server). This
 * page hands it to the waiting element over a BroadcastChannel, which only pages of this origin in
 * this browser hear, and closes. Only the element whose user started the flow can confirm the
 * grant with its own token, so the browser binding holds. Name the page's address in the
 * element's `oauth-return-url`.
 */

/** The channel the return page and the elements share. */
export const OAUTH_RETURN_CHANNEL = 'forge-oauth';

/** The return page's HTML. Serve it as is (text/html), e.g. at `/forge-oauth-return.html`. */
export function oauthReturnPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>Connecting…</title></head>
<body><p id="note">Finishing the connection… You can close this window.</p>
<script>
(function () {
  var text = location.hash.slice(1);
  // The fragment is not kept in this window's history.
  history.replaceState(null, '', location.pathname + location.search);
  try {
    var message = JSON.parse(decodeURIComponent(text));
    if (message && message.type === 'forge-oauth') {
      var channel = new BroadcastChannel(${JSON.stringify(OAUTH_RETURN_CHANNEL)});
      channel.postMessage(message);
      channel.close();
      window.close();
      return;
    }
  } catch (error) {}
  document.getElementById('note').textContent = 'Nothing to finish here. Close this window and choose Connect again.';
})();
</script></body></html>`;
}

/** A Fetch-style handler that answers the return page (for `toNodeHandler`, edge runtimes, Deno, Bun). */
export function createOAuthReturnHandler(): (request: Request) => Promise<Response> {
  return async () =>
    new Response(oauthReturnPage(), {
      headers: {
        'Content-Type': 'text/html; charset=utf-8',
        'Cache-Control': 'no-store',
        'Referrer-Policy': 'no-referrer',
      },
    });
}
