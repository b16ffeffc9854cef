// Type checks of the elements in React 19 JSX, through the published `forge-embed/jsx` types.
// Compiled (never run) by test/server/types.test.ts; each @ts-expect-error must stay an error.
import 'forge-embed';
import type {} from 'forge-embed/jsx';

export const configured = (
  <>
    <forge-workflow-list
      api-base="https://forge.example.com"
      token-url="/forge-token"
      tokenProvider={async () => 'user-token'}
      strings={{ enable: 'Turn on' }}
      oauth-return-url="/forge-oauth-return"
      onforge-toggle={(event) => event.detail.active satisfies boolean}
      onforge-error={(event) => event.detail.code satisfies string}
    />
    <forge-config-modal
      workflow-id="64b14ff1704e5bc1057506db"
      theme="dark"
      onforge-install={(event) => event.detail.workflowId satisfies string}
      onforge-hide={(event) => event.preventDefault()}
      oauth-return-url="/forge-oauth-return"
    />
    <forge-integration-list
      token-url="/forge-token"
      oauth-return-url="/forge-oauth-return"
      onforge-disconnect={(event) => event.detail.switchedOff satisfies string[]}
    />
  </>
);

// @ts-expect-error forge-toggle's detail has no parentId
export const wrongDetail = <forge-workflow-list onforge-toggle={(event) => event.detail.parentId} />;

// @ts-expect-error theme is light or dark
export const wrongTheme = <forge-config-modal theme="blue" />;

// @ts-expect-error tokenProvider answers a promise of a token
export const wrongProvider = <forge-workflow-list tokenProvider={() => 42} />;
