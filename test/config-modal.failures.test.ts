import { expect, fixture, html } from '@open-wc/testing';
import { decodeJwt } from 'jose';
import type { ForgeConfigModal } from '../src/config-modal/config-modal.js';
import { TokenSource } from '../src/token/token-source.js';
import {
  button,
  childrenOf,
  connectedUser,
  field,
  fill,
  install,
  modalFixture,
  recordEvents,
  STRIPE_TO_SLACK,
  untilButton,
  untilPart,
  untilRole,
  variablesOf,
  visibleText,
} from './support/config-modal.js';
import { clearFaults, createUser, injectFault, serviceInfo, tokenUrl, userToken } from './support/forge.js';
import { waitUntil } from './support/wait.js';

async function modalWithTokenUrl(url: string) {
  const { apiBase } = await serviceInfo();
  return fixture<ForgeConfigModal>(
    html`<forge-config-modal api-base=${apiBase} token-url=${url} workflow-id=${STRIPE_TO_SLACK}></forge-config-modal>`,
  );
}

/** Opens the modal and waits for the error view; answers its text and the forge-error details. */
async function openExpectingError(el: ForgeConfigModal) {
  const errors = recordEvents(el, ['forge-error']);
  await el.show();
  const alert = await untilPart(el, 'message');
  return { text: alert.textContent!.replace(/\s+/g, ' ').trim(), errors: errors.map((e) => e.detail) };
}

describe('<forge-config-modal> token failures', () => {
  it('says so when the token endpoint fails, and retries with a new request', async () => {
    const userId = await createUser();
    const el = await modalWithTokenUrl(tokenUrl(userId, 'error'));
    const { text, errors } = await openExpectingError(el);
    expect(text).to.include('This could not be opened.').and.include('answered 500');
    expect(errors).to.have.length(1);
    expect(errors[0]).to.include({ code: 'token-fetch-failed', status: 500 });
    expect(el.shadowRoot!.activeElement!.textContent!.trim(), 'focus on Try again').to.equal('Try again');

    el.tokenUrl = tokenUrl(userId);
    button(el, 'Try again')!.click();
    await untilPart(el, 'integration');
  });

  it('gives up on a token endpoint that never answers, and a later open can succeed', async () => {
    const userId = await createUser();
    const saved = TokenSource.timeoutMs;
    TokenSource.timeoutMs = 300;
    try {
      const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
      let answer = false;
      el.tokenProvider = () => (answer ? userToken(userId) : new Promise<string>(() => undefined));
      const { text, errors } = await openExpectingError(el);
      expect(text).to.include('No user token arrived within 0.3 seconds');
      expect(errors[0]).to.include({ code: 'token-fetch-failed' });
      answer = true;
      button(el, 'Try again')!.click();
      await untilPart(el, 'integration');
    } finally {
      TokenSource.timeoutMs = saved;
    }
  });

  it('says so when the token endpoint answers HTML', async () => {
    const userId = await createUser();
    const { text, errors } = await openExpectingError(await modalWithTokenUrl(tokenUrl(userId, 'html')));
    expect(text).to.include('did not answer JSON of the form {"token": "<JWT>"}');
    expect(errors).to.deep.equal([{ code: 'token-malformed', message: (errors[0] as { message: string }).message }]);
  });

  it('says so when the token is not a JWT', async () => {
    const userId = await createUser();
    const { text, errors } = await openExpectingError(await modalWithTokenUrl(tokenUrl(userId, 'garbage')));
    expect(text).to.include('did not answer a user token (a JWT)');
    expect(errors[0]).to.include({ code: 'token-malformed' });
  });

  it('says so when the token has already expired', async () => {
    const userId = await createUser();
    const stale = await userToken(userId, 1);
    await waitUntil(() => Date.now() > decodeJwt(stale).exp! * 1000, 'the token expires', { timeout: 3000 });
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK });
    el.tokenProvider = async () => stale;
    const { text, errors } = await openExpectingError(el);
    expect(text).to.include('The user token had already expired');
    expect(errors[0]).to.include({ code: 'token-expired' });
  });

  it('says so when api-base or the token source is missing', async () => {
    const el = await fixture<ForgeConfigModal>(
      html`<forge-config-modal workflow-id=${STRIPE_TO_SLACK}></forge-config-modal>`,
    );
    const { text, errors } = await openExpectingError(el);
    expect(text).to.include('Set api-base on <forge-config-modal>');
    expect(errors[0]).to.include({ code: 'config' });
  });

  it('says so when the workflow is not on offer', async () => {
    const userId = await createUser();
    const el = await modalFixture({ userId, workflowId: 'no-such-workflow' });
    const { text, errors } = await openExpectingError(el);
    expect(text).to.include('No workflow no-such-workflow is on offer');
    expect(errors[0]).to.include({ code: 'load-failed', status: 404 });
  });
});

describe('<forge-config-modal> save failures', () => {
  afterEach(() => clearFaults());

  /** A user with the accounts connected, and the modal talking to the service through the faulty proxy. */
  async function modalBehindProxy() {
    const userId = await connectedUser();
    const { faultyBase } = await serviceInfo();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK, apiBase: faultyBase });
    await el.show();
    await untilRole(el, 'form', 'Settings');
    return { el, userId };
  }

  it('keeps every value after a 500 and installs on retry', async () => {
    const { el, userId } = await modalBehindProxy();
    const events = recordEvents(el, ['forge-error', 'forge-install']);
    fill(el, 'Channel', '#kept');
    fill(el, 'Minimum amount', '99');
    await injectFault('POST', '/install$', 500);
    (await untilButton(el, 'Enable workflow')).click();

    const alert = await untilPart(el, 'message');
    expect(alert.textContent).to.include('Your settings were not saved.').and.include('The service failed to answer');
    expect(field(el, 'Channel').value).to.equal('#kept');
    expect(field(el, 'Minimum amount').value).to.equal('99');
    expect(events.map((e) => e.detail)).to.deep.equal([
      { code: 'save-failed', message: (events[0]!.detail as { message: string }).message, status: 500 },
    ]);

    button(el, 'Enable workflow')!.click();
    await untilButton(el, 'Done');
    const [child] = await childrenOf(userId);
    expect(await variablesOf(child!._id)).to.deep.equal({ channel: '#kept', minimumAmount: 99 });
    expect(events.map((e) => e.type)).to.deep.equal(['forge-error', 'forge-install']);
  });

  it('keeps every value after a network failure and saves on retry', async () => {
    const userId = await connectedUser();
    const childId = await install(userId, STRIPE_TO_SLACK);
    const { faultyBase } = await serviceInfo();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK, apiBase: faultyBase });
    const events = recordEvents(el, ['forge-error', 'forge-update']);
    await el.show();
    await untilRole(el, 'form', 'Settings');
    fill(el, 'Channel', '#after-outage');
    await injectFault('PATCH', '/variables/', 'network');
    (await untilButton(el, 'Save changes')).click();

    const alert = await untilPart(el, 'message');
    expect(alert.textContent).to.include('Could not reach the Forge service');
    expect(field(el, 'Channel').value).to.equal('#after-outage');
    expect(events[0]!.detail).to.include({ code: 'save-failed' });

    button(el, 'Save changes')!.click();
    await untilButton(el, 'Done');
    expect((await variablesOf(childId)).channel).to.equal('#after-outage');
    expect(visibleText(el)).to.include('Changes saved');
    expect(events.map((e) => e.type)).to.deep.equal(['forge-error', 'forge-update']);
  });

  it('offers a retry when loading fails, and loads on it', async () => {
    const userId = await createUser();
    const { faultyBase } = await serviceInfo();
    const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK, apiBase: faultyBase });
    await injectFault('GET', '/setup$', 500);
    const { text, errors } = await openExpectingError(el);
    expect(text).to.include('The service failed to answer');
    expect(errors[0]).to.include({ code: 'load-failed', status: 500 });
    button(el, 'Try again')!.click();
    await untilPart(el, 'integration');
  });
});
