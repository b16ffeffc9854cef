// Type checks of the `forge-embed/react` wrapper (React 18 and later), through the published
// types. Compiled (never run) by test/server/types.test.ts; each @ts-expect-error must stay an error.
import type { ForgeConfigModal as ModalElement } from 'forge-embed';
import { ForgeConfigModal, ForgeIntegrationList, ForgeWorkflowList } from 'forge-embed/react';
import { createRef } from 'react';

const modal = createRef<ModalElement>();

export const configured = (
  <>
    <ForgeWorkflowList
      apiBase="https://forge.example.com"
      tokenUrl="/forge-token"
      strings={{ enable: 'Turn on' }}
      onForgeToggle={(event) => event.detail.active satisfies boolean}
    />
    <ForgeConfigModal
      ref={modal}
      apiBase="https://forge.example.com"
      tokenProvider={async () => 'user-token'}
      integration="slack"
      onForgeInstall={(event) => event.detail.parentId satisfies string}
      onForgeAfterHide={(event) => event.detail.reason satisfies string}
      oauthReturnUrl="/forge-oauth-return"
    />
    <ForgeIntegrationList
      tokenUrl="/forge-token"
      oauthReturnUrl="/forge-oauth-return"
      onForgeConnect={(event) => event.detail.integration satisfies string}
    />
  </>
);

export const open = () => modal.current?.show();

// @ts-expect-error forge-toggle's detail has no parentId
export const wrongDetail = <ForgeWorkflowList onForgeToggle={(event) => event.detail.parentId} />;

// @ts-expect-error the list has no workflowId
export const wrongProp = <ForgeWorkflowList workflowId="64b14ff1704e5bc1057506db" />;
