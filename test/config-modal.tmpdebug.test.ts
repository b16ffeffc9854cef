import { expect } from '@open-wc/testing';
import { connectAccounts, fill, install, modalFixture, recordEvents, STRIPE_TO_SLACK, until, untilButton, visibleText, recordRequests } from './support/config-modal.js';
import { createUser, injectFault, serviceInfo } from './support/forge.js';

it('debug', async () => {
  const userId = await createUser();
  await connectAccounts(userId, ['stripe', 'slack']);
  await install(userId, STRIPE_TO_SLACK);
  const { faultyBase } = await serviceInfo();
  const el = await modalFixture({ userId, workflowId: STRIPE_TO_SLACK, apiBase: faultyBase });
  const events = recordEvents(el, ['forge-error', 'forge-update']);
  await el.show();
  await until(el, 'form#settings');
  fill(el, 'Channel', '#after-outage');
  await injectFault('PATCH', '/variables/', 'network');
  const { requests, restore } = recordRequests();
  (await untilButton(el, 'Save changes')).click();
  await new Promise((r) => setTimeout(r, 3000));
  restore();
  console.log(JSON.stringify(events), JSON.stringify(requests.map(r => r.method + ' ' + r.url)), visibleText(el));
  expect(1).to.equal(1);
});
