import { expect } from '@open-wc/testing';
import { ForgeClient } from '../src/api/index.js';
import { createUser, serviceInfo, userToken } from './support/forge.js';

describe('ForgeClient in the browser', () => {
  it('reads the parent workflows with a user token', async () => {
    const { apiBase } = await serviceInfo();
    const userId = await createUser();
    const client = new ForgeClient({ baseUrl: apiBase, credential: await userToken(userId) });
    const workflows = await client.listWorkflows();
    expect(workflows.length).to.be.greaterThan(5);
  });
});
