/**
 * Why a browser's request to the service failed without an answer, when the reason is that the
 * service does not allow the page's origin; undefined when it is not.
 *
 * A request the service's CORS policy refuses fails exactly as one that never reached it: a
 * TypeError, nothing else to read, in every engine. A `no-cors` GET needs no CORS header, so it is
 * answered (opaquely) when the service is up and fails when it is not: the same service answering
 * it means the failure was the origin. A public read is asked (the signing keys), never the request
 * that failed, which may change something. Only from another origin: CORS does not apply to the
 * page's own, and a same-origin request that failed did so on the way.
 */
export async function originRefusal(
  /** The service's versioned API address: the base URL and API_VERSION_PATH (this module imports nothing, so no circle). */
  apiUrl: string,
  fetcher: typeof fetch,
  signal: AbortSignal | undefined,
): Promise<string | undefined> {
  const { origin } = location;
  if (new URL(apiUrl, origin).origin === origin) return undefined;
  try {
    await fetcher(`${apiUrl}/.well-known/jwks.json`, {
      mode: 'no-cors',
      cache: 'no-store',
      signal,
    });
  } catch {
    return undefined;
  }
  return `This page's origin (${origin}) is not allowed by the Forge service; add it to FORGE_ALLOWED_ORIGINS.`;
}
