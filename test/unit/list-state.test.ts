import { expect } from '@open-wc/testing';
import type { ParentWorkflow } from '../../src/api/types.js';
import { installedFrom, justInstalled, matches, offersFrom } from '../../src/workflow-list/state.js';

const parent = (workflowId: string, name: string, description?: string): ParentWorkflow => ({
  workflowId,
  name,
  ...(description ? { description } : {}),
  integrations: [{ name: 'google-sheets', displayName: 'Google Sheets', icon: '', type: 'oauth2' }],
  blocks: [],
});

describe('list state', () => {
  it('prepares no filter text until the filter first asks', () => {
    const [offer] = offersFrom([parent('p1', 'Payments to Slack', 'Posts each payment')]);
    expect(offer!.haystack).to.equal(undefined);
    expect(matches(offer!, 'slack')).to.equal(true);
    expect(offer!.haystack).to.be.a('string');
  });

  it('matches the name, the description and the integrations’ names, whatever their case', () => {
    const [offer] = offersFrom([parent('p1', 'Payments to Slack', 'Posts each PAYMENT')]);
    for (const needle of ['payments to', 'posts each payment', 'google sheets']) {
      expect(matches(offer!, needle), needle).to.equal(true);
    }
    expect(matches(offer!, 'hubspot')).to.equal(false);
    // Words are joined by a line break, so a needle never matches across two of them.
    expect(matches(offer!, 'slack posts')).to.equal(false);
  });

  it('takes a workflow without a description', () => {
    const [offer] = offersFrom([parent('p2', 'Leads to HubSpot')]);
    expect(matches(offer!, 'leads')).to.equal(true);
    expect(matches(offer!, 'undefined')).to.equal(false);
  });

  it('starts a switch where the service says it is, and a new install on and never run', () => {
    const row = installedFrom(justInstalled('c1', 'p1'));
    expect(row).to.include({ childId: 'c1', active: true, wanted: true });
    expect(row.health).to.include({ parentId: 'p1', lastRun: null, failedLast24h: 0, failure: null });
  });
});
