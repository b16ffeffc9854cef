import { expect } from '@open-wc/testing';
import { TokenError } from '../../src/errors.js';
import { type Clock, decodeUserToken, refreshTime, TokenSource } from '../../src/token/token-source.js';

const MINUTE = 60_000;

/** A clock that moves only when the test says so; its timers run as it passes them. */
class TestClock implements Clock {
  time = Date.UTC(2026, 0, 1);
  #timers = new Map<number, { at: number; run: () => void }>();
  #next = 1;

  now = () => this.time;

  setTimeout = (run: () => void, ms: number) => {
    this.#timers.set(this.#next, { at: this.time + Math.max(0, ms), run });
    return this.#next++;
  };

  clearTimeout = (timer: unknown) => {
    this.#timers.delete(timer as number);
  };

  /** Moves time on by `ms`, running each timer due on the way (and what its promises do) in order. */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      const [id, due] = [...this.#timers].sort(([, a], [, b]) => a.at - b.at)[0] ?? [];
      if (!due || due.at > end) break;
      this.#timers.delete(id!);
      this.time = due.at;
      due.run();
      await settle();
    }
    this.time = end;
    await settle();
  }
}

/** Lets the promise callbacks queued so far run. */
const settle = () => new Promise((resolve) => setTimeout(resolve));

/** JSON, UTF-8, base64url without padding: how a JWT's parts are written. */
const base64url = (value: unknown) =>
  btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(value))))
    .replace(/=+$/, '')
    .replace(/\+/g, '-')
    .replace(/\//g, '_');

/** A JWT with these claims; the browser never verifies the signature, so none is needed. */
const jwt = (claims: Record<string, unknown>) => `${base64url({ alg: 'ES256' })}.${base64url(claims)}.c2ln`;

/** A provider that hands out tokens for user-1 living `lifetime` ms from the clock's now, counting its calls. */
function provider(clock: TestClock, lifetime = 30 * MINUTE) {
  const issued: string[] = [];
  const provide = async () => {
    const token = jwt({ sub: 'user-1', exp: Math.floor((clock.now() + lifetime) / 1000) });
    issued.push(token);
    return token;
  };
  return { provide, issued };
}

describe('decodeUserToken', () => {
  it('reads the user and the expiry of a token', () => {
    const exp = Math.floor(Date.now() / 1000) + 600;
    expect(decodeUserToken(jwt({ sub: 'user-1', exp }))).to.deep.include({ userId: 'user-1', expiresAt: exp * 1000 });
  });

  it('reads a payload whose base64url uses - and _, and a user id in any script', () => {
    const exp = Math.floor(Date.now() / 1000) + 600;
    // "~~~" and "???" encode to "fn5-" and "Pz8_": the two letters base64url changes.
    const token = jwt({ sub: 'zoë-~~~???', exp });
    expect(token.split('.')[1]).to.match(/-/).and.match(/_/);
    expect(decodeUserToken(token).userId).to.equal('zoë-~~~???');
  });

  for (const [name, token, code] of [
    ['something that is not a JWT', 'not-a-jwt', 'token-malformed'],
    ['three parts that are not base64url JSON', 'a.b!.c', 'token-malformed'],
    ['a payload that is not an object', `${'e30'}.${btoa('7')}.c2ln`, 'token-malformed'],
    ['a token without a user', jwt({ exp: 4_000_000_000 }), 'token-malformed'],
    ['a token without an expiry', jwt({ sub: 'user-1' }), 'token-malformed'],
    ['a token that expired before it arrived', jwt({ sub: 'user-1', exp: 1000 }), 'token-expired'],
  ] as const) {
    it(`refuses ${name}, saying what to check`, () => {
      let error: unknown;
      try {
        decodeUserToken(token);
      } catch (caught) {
        error = caught;
      }
      expect(error).to.be.instanceOf(TokenError);
      expect((error as TokenError).code).to.equal(code);
      expect((error as TokenError).message).to.match(/Check|Use a token/);
    });
  }
});

describe('refreshTime', () => {
  it('replaces a token a minute before it expires', () => {
    expect(refreshTime(0, 30 * MINUTE)).to.equal(29 * MINUTE);
  });

  it('replaces a token shorter-lived than two minutes at half its life', () => {
    expect(refreshTime(0, MINUTE)).to.equal(MINUTE / 2);
    expect(refreshTime(1000, 5000)).to.equal(3000);
  });
});

describe('TokenSource', () => {
  it('shares one fetch between callers that ask at the same time', async () => {
    const clock = new TestClock();
    const { provide, issued } = provider(clock);
    const source = new TokenSource(provide, clock);
    const [a, b, c] = await Promise.all([source.fresh(), source.fresh(), source.current()]);
    expect(issued).to.have.length(1);
    expect(b.token).to.equal(a.token);
    expect(c.token).to.equal(a.token);
  });

  it('answers the token in hand until it is due, then a new one', async () => {
    const clock = new TestClock();
    const { provide, issued } = provider(clock);
    const source = new TokenSource(provide, clock);
    const first = await source.current();
    await clock.advance(29 * MINUTE - 1);
    expect((await source.current()).token).to.equal(first.token);
    await clock.advance(1);
    expect((await source.current()).token).not.to.equal(first.token);
    expect(issued).to.have.length(2);
  });

  it('keeps the token fresh in the background only while someone asks it to', async () => {
    const clock = new TestClock();
    const { provide, issued } = provider(clock, 10 * MINUTE);
    const source = new TokenSource(provide, clock);
    const list = {};
    const modal = {};
    await source.fresh();
    await clock.advance(20 * MINUTE);
    expect(issued, 'nobody keeps it fresh').to.have.length(1);

    source.keepFresh(list, true);
    source.keepFresh(modal, true);
    // Due at once (the held token is past its time): then every 9 minutes.
    await clock.advance(9 * MINUTE);
    expect(issued).to.have.length(3);
    source.keepFresh(modal, false);
    await clock.advance(9 * MINUTE);
    expect(issued, 'the list still keeps it fresh').to.have.length(4);
    source.keepFresh(list, false);
    source.keepFresh(list, false);
    await clock.advance(60 * MINUTE);
    expect(issued).to.have.length(4);
  });

  it('gives up on a token endpoint that does not answer, and asks again on the next call', async () => {
    const clock = new TestClock();
    let calls = 0;
    const source = new TokenSource(() => {
      calls++;
      return new Promise<string>(() => undefined);
    }, clock);
    const first = source.fresh().catch((error: TokenError) => error);
    await clock.advance(TokenSource.timeoutMs);
    const error = (await first) as TokenError;
    expect(error.code).to.equal('token-fetch-failed');
    expect(error.message).to.include('Check that the token endpoint answers');
    void source.fresh().catch(() => undefined);
    expect(calls).to.equal(2);
  });
});
