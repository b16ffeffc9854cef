import { expect, nextFrame, oneEvent } from '@open-wc/testing';
import '../../src/index.js';
import type { ForgeEventDetails } from '../../src/events.js';
import type { ForgeWorkflowList } from '../../src/workflow-list/workflow-list.js';
import { listBindings, mountPoint, switchIn } from './support.js';

/**
 * Frameworks often set an element's properties after it has connected and rendered (React when it
 * hydrates server-rendered markup or re-renders, a template that binds in a later pass). The
 * elements read their configuration when they need it, and say it is missing only when it still
 * is, a moment after the page has loaded.
 */
describe('configuration that arrives late', () => {
  it('the list loads once a framework sets its properties, with no error in between', async () => {
    const bindings = await listBindings();
    const container = mountPoint();
    const list = document.createElement('forge-workflow-list') as ForgeWorkflowList;
    const errors: ForgeEventDetails['forge-error'][] = [];
    list.addEventListener('forge-error', (event) => errors.push(event.detail));
    container.append(list);
    await list.updateComplete;
    await nextFrame();
    await nextFrame();

    list.apiBase = bindings.apiBase;
    list.tokenProvider = bindings.tokenProvider;
    list.strings = bindings.strings;
    await switchIn(list);
    expect(list.shadowRoot!.textContent).to.include('Switch on');
    expect(errors).to.deep.equal([]);
    container.remove();
  });

  it('says what is missing when nothing sets it', async () => {
    const container = mountPoint();
    const list = document.createElement('forge-workflow-list') as ForgeWorkflowList;
    list.apiBase = 'https://forge.example.com';
    const error = oneEvent(list, 'forge-error');
    container.append(list);
    const { detail } = await error;
    expect(detail.code).to.equal('config');
    expect(detail.message).to.include('Set token-url (or the tokenProvider property) on <forge-workflow-list>');
    await list.updateComplete;
    expect(list.shadowRoot!.textContent).to.include('Set token-url');
    container.remove();
  });
});
