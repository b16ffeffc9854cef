import { expect, fixture, html } from '@open-wc/testing';
import type { ForgeConfigModal } from '../src/config-modal/config-modal.js';
import {
  button,
  byPart,
  byRole,
  childrenOf,
  connectAccounts,
  connectedCount,
  fill,
  integrationRow,
  recordEvents,
  requestsDuring,
  STRIPE_TO_SLACK,
  untilButton,
  untilPart,
} from './support/config-modal.js';
import { consentInPopup, createUser, serviceInfo, userToken } from './support/forge.js';
import { waitUntil } from './support/wait.js';

/** A host's token provider that counts its calls and remembers every token it handed out. */
function countingProvider(userId: string, expiresIn?: number) {
  const issued: string[] = [];
  const provider = async () => {
    const token = await userToken(userId, expiresIn);
    issued.push(token);
    return token;
  };
  return { provider, issued };
}

async function modalWithProvider(provider: () => Promise<string>, workflowId = STRIPE_TO_SLACK) {
  const { apiBase } = await serviceInfo();
  const el = await fixture<ForgeConfigModal>(
    html`<forge-config-modal api-base=${apiBase} workflow-id=${workflowId}></forge-config-modal>`,
  );
  el.tokenProvider = provider;
  return el;
}

describe('<forge-config-modal> user token', () => {
  it('fetches a fresh token for every open', async () => {
    const userId = await createUser();
    const { provider, issued } = countingProvider(userId);
    const el = await modalWithProvider(provider);
    await el.show();
    await untilPart(el, 'integration');
    expect(issued).to.have.length(1);
    await el.hide();
    await el.show();
    await untilPart(el, 'integration');
    expect(issued).to.have.length(2);
  });

  it('reads a repeat open beside its new token, and shows it only once that token has come', async () => {
    const userId = await createUser();
    let hold = false;
    let release: (() => void) | undefined;
    const provider = async () => {
      const token = await userToken(userId);
      if (hold) await new Promise<void>((resolve) => (release = resolve));
      return token;
    };
    const el = await modalWithProvider(provider);
    await el.show();
    await untilPart(el, 'integration');
    await el.hide();

    const { apiBase } = await serviceInfo();
    const setupReads: string[] = [];
    const realFetch = window.fetch;
    window.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
      const { url } = new Request(input, init);
      if (url.startsWith(`${apiBase}/forge/2021-12/setup`)) setupReads.push(url);
      return realFetch(input, init);
    };
    try {
      hold = true;
      const shown = el.show();
      await waitUntil(() => setupReads.length === 1 && release, 'GET /setup while the new token is on its way');
      await untilPart(el, 'body');
      expect(byPart(el.shadowRoot!, 'integration'), 'shown before its new token came').to.equal(null);
      release!();
      await shown;
      await untilPart(el, 'integration');
    } finally {
      window.fetch = realFetch;
    }
    expect(setupReads, 'one read per open').to.have.length(1);
  });

  it('reads again with the new token when it names another user than the one in hand', async () => {
    const first = await createUser();
    await connectAccounts(first, ['stripe']);
    const second = await createUser();
    let calls = 0;
    const el = await modalWithProvider(() => userToken(++calls === 1 ? first : second));
    await el.show();
    await untilPart(el, 'integration');
    expect(connectedCount(el), "the first user's account").to.equal(1);
    await el.hide();
    // The token endpoint now answers for another user, as a host's does after a sign-in.
    await el.show();
    await untilPart(el, 'integration');
    expect(connectedCount(el), "the second user's accounts, never the first's").to.equal(0);
  });

  it('shares one token fetch between modals opened at the same time', async () => {
    const userId = await createUser();
    const { provider, issued } = countingProvider(userId);
    const first = await modalWithProvider(provider);
    const second = await modalWithProvider(provider, '64b1d6aac655b8a937b7db20');
    await Promise.all([first.show(), second.show()]);
    await Promise.all([untilPart(first, 'integration'), untilPart(second, 'integration')]);
    expect(issued).to.have.length(1);
    await second.hide();
  });

  it('fetches a new token once and retries when the service answers 401', async () => {
    const userId = await createUser();
    const valid = countingProvider(userId);
    let calls = 0;
    // The first token reads well but its signature is wrong, so the service refuses it.
    const provider = async () => {
      calls++;
      if (calls > 1) return valid.provider();
      const [header, payload, signature] = (await userToken(userId)).split('.');
      return [header, payload, [...signature!].reverse().join('')].join('.');
    };
    const el = await modalWithProvider(provider);
    const errors = recordEvents(el, ['forge-error']);
    await el.show();
    await untilPart(el, 'integration');
    expect(calls).to.be.greaterThan(1);
    expect(errors).to.deep.equal([]);
  });

  it('sends the token only in the Authorization header and never stores it', async () => {
    const userId = await createUser();
    const { provider, issued } = countingProvider(userId);
    const el = await modalWithProvider(provider);
    let popupUrl = '';
    const requests = await requestsDuring(async () => {
      await el.show();
      await untilPart(el, 'integration');
      fill(el, 'Secret key', 'sk_test_header_only');
      byRole<HTMLButtonElement>(integrationRow(el, 'Stripe'), 'button', 'Connect')!.click();
      await waitUntil(() => connectedCount(el) === 1);
      (await untilButton(el, 'Connect')).click();
      popupUrl = await consentInPopup('allow');
      await waitUntil(() => connectedCount(el) === 2, 'Slack connects');
      button(el, 'Continue')!.click();
      (await untilButton(el, 'Enable workflow')).click();
      await untilButton(el, 'Done');
    });
    const { apiBase } = await serviceInfo();
    const toService = requests.filter((r) => r.url.startsWith(apiBase));
    expect(toService.length).to.be.greaterThan(5);
    for (const token of issued) {
      for (const request of requests) {
        expect(request.url, request.url).not.to.include(token);
        expect(request.body, request.url).not.to.include(token);
      }
      expect(popupUrl).not.to.include(token);
      expect(
        JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie,
      ).not.to.include(token);
    }
    for (const request of toService) expect(request.authorization).to.equal(`Bearer ${issued.at(-1)}`);
    // And the service agrees the workflow is the user's.
    expect(await childrenOf(userId)).to.have.length(1);
  });
});
