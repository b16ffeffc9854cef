import { expect } from '@open-wc/testing';
import { authorizationUrl, waitForOAuth } from '../../src/config-modal/oauth-popup.js';
import { ForgeError } from '../../src/errors.js';
import { waitUntil } from '../support/wait.js';

const refusal = (url: string) => {
  try {
    authorizationUrl(url);
  } catch (error) {
    return error as ForgeError;
  }
  return undefined;
};

describe('the OAuth popup', () => {
  it('opens https addresses, and http ones only on this machine', () => {
    for (const url of [
      'https://forge.example.com/oauth/start?state=abc',
      'http://localhost:4010/local-oauth/authorize',
      'http://127.0.0.1:4010/x',
      'http://[::1]:4010/x',
      'http://forge.localhost/x',
    ]) {
      expect(refusal(url), url).to.equal(undefined);
    }
  });

  it('refuses anything else with a connect-failed error that says why', () => {
    for (const url of [
      'javascript:opener.document.title="pwned"',
      'JAVASCRIPT:alert(1)',
      'data:text/html,<script>opener.x=1</script>',
      'http://forge.example.com/oauth',
      'http://localhost.example.com/oauth',
      'not a url',
    ]) {
      const error = refusal(url);
      expect(error, url).to.be.instanceOf(ForgeError);
      expect(error!.code).to.equal('connect-failed');
      expect(error!.message).to.include('only https addresses are opened');
    }
  });

  it('never sends the popup to a refused address, and closes it', async () => {
    const page = window as unknown as { forgeUnitPwned?: boolean };
    const popup = open('', 'forge-unit-popup', 'popup,width=200,height=200')!;
    const outcome = await waitForOAuth(
      popup,
      'javascript:opener.forgeUnitPwned=true',
      location.origin,
      'slack',
      2000,
      new AbortController().signal,
    ).then(
      () => undefined,
      (error: ForgeError) => error.code,
    );
    expect(outcome).to.equal('connect-failed');
    await waitUntil(() => popup.closed, 'the popup closes');
    expect(page.forgeUnitPwned).to.equal(undefined);
  });
});
