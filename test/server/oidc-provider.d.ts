// oidc-provider ships no type declarations; the tests use a few of its calls (test/server/oauth-support.ts).
declare module 'oidc-provider';
