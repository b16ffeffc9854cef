import { expect } from '@open-wc/testing';
import type { WorkflowSummary } from '../../src/api/types.js';
import { installedFrom, justInstalled, listingFrom, matches, type Offer } from '../../src/workflow-list/state.js';

const parent = (workflowId: string, name: string, description?: string): WorkflowSummary => ({
  workflowId,
  name,
  ...(description ? { description } : {}),
  integrations: ['google-sheets'],
  blocks: [],
});

const { integrations } = listingFrom({
  workflows: [],
  integrations: [{ name: 'google-sheets', displayName: 'Google Sheets', icon: '', type: 'oauth2' }],
});
const offersFrom = (workflows: WorkflowSummary[]): Offer[] => listingFrom({ workflows, integrations: [] }).offers;

describe('list state', () => {
  it('prepares no filter text until the filter first asks', () => {
    const [offer] = offersFrom([parent('p1', 'Payments to Slack', 'Posts each payment')]);
    expect(offer!.haystack).to.equal(undefined);
    expect(matches(offer!, 'slack', integrations)).to.equal(true);
    expect(offer!.haystack).to.be.a('string');
  });

  it('matches the name, the description and the integrations’ names, whatever their case', () => {
    const [offer] = offersFrom([parent('p1', 'Payments to Slack', 'Posts each PAYMENT')]);
    for (const needle of ['payments to', 'posts each payment', 'google sheets']) {
      expect(matches(offer!, needle, integrations), needle).to.equal(true);
    }
    expect(matches(offer!, 'hubspot', integrations)).to.equal(false);
    // Words are joined by a line break, so a needle never matches across two of them.
    expect(matches(offer!, 'slack posts', integrations)).to.equal(false);
  });

  it('takes a workflow without a description', () => {
    const [offer] = offersFrom([parent('p2', 'Leads to HubSpot')]);
    expect(matches(offer!, 'leads', integrations)).to.equal(true);
    expect(matches(offer!, 'undefined', integrations)).to.equal(false);
  });

  it('starts a switch where the service says it is, and a new install on and never run', () => {
    const row = installedFrom(justInstalled('c1', 'p1'));
    expect(row).to.include({ childId: 'c1', active: true, wanted: true });
    expect(row.health).to.include({ parentId: 'p1', lastRun: null, failedLast24h: 0, failure: null });
  });
});
