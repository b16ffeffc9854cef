import { expect } from '@open-wc/testing';
import { ForgeApiError, ForgeClient } from '../src/api/index.js';
import { clearFaults, createUser, injectFault, serviceInfo, userToken } from './support/forge.js';

describe('ForgeClient in the browser', () => {
  it('reads the parent workflows with a user token', async () => {
    const { apiBase } = await serviceInfo();
    const userId = await createUser();
    const client = new ForgeClient({ baseUrl: apiBase, credential: await userToken(userId) });
    const workflows = await client.listWorkflows();
    expect(workflows.length).to.be.greaterThan(5);
  });

  it('reports a 200 whose body breaks off as an error, not as a success with no data', async () => {
    const { faultyBase } = await serviceInfo();
    const userId = await createUser();
    const client = new ForgeClient({ baseUrl: faultyBase, credential: await userToken(userId) });
    await injectFault('GET', `^/forge/2021-12/user/${userId}$`, 'truncated');
    try {
      const answer = await client.getUser(userId).then(
        (user) => ({ user }),
        (error: unknown) => ({ error }),
      );
      expect(answer).to.have.property('error');
      const { error } = answer as { error: ForgeApiError };
      expect(error).to.be.instanceOf(ForgeApiError);
      expect(error.status).to.equal(0);
      expect(error.message).to.include('the whole answer never arrived');
    } finally {
      await clearFaults();
    }
  });
});
