import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ForgeApiError, ForgeClient } from '../src/api/index.js';

/** The demo's end users: people signed in to the host app, each a user of the Forge service. */
export interface DemoUser {
  /** The host app's own id for the person, kept in its session cookie. */
  slug: string;
  name: string;
  email: string;
  /** The Forge service's id for the person, created through the API on first start. */
  forgeId: string;
}

type Seed = Omit<DemoUser, 'forgeId'> & {
  /** What this person has already set up, so switching users shows different lists. */
  connect: Array<{ integration: string; values?: Record<string, string> }>;
  install: string[];
};

const SEEDS: Seed[] = [
  {
    slug: 'maya',
    name: 'Maya Chen',
    email: 'maya.chen@orbit.example',
    connect: [{ integration: 'stripe', values: { secretKey: 'sk_test_demo_maya' } }, { integration: 'slack' }],
    // Post new Stripe payments to Slack.
    install: ['64b14ff1704e5bc1057506db'],
  },
  {
    slug: 'jonas',
    name: 'Jonas Weber',
    email: 'jonas.weber@orbit.example',
    connect: [],
    install: [],
  },
  {
    slug: 'priya',
    name: 'Priya Patel',
    email: 'priya.patel@orbit.example',
    connect: [
      { integration: 'hubspot' },
      { integration: 'mailchimp', values: { apiKey: 'demo-key-priya', serverPrefix: 'us21' } },
    ],
    // Sync HubSpot contacts to a Mailchimp audience.
    install: ['64b10ec47f57139c3f7e7cdd'],
  },
];

/**
 * The demo users with their Forge ids. The host app remembers the mapping in `statePath` (a
 * real one keeps it in its user table); users that are missing on the service, e.g. after its
 * database was deleted, are created again and given their starting workflows.
 */
export async function loadDemoUsers(options: {
  serviceUrl: string;
  apiKey: string;
  statePath: string;
  /** The demo page's origin, which the service allows; the OAuth flow starts from it. */
  origin: string;
}): Promise<DemoUser[]> {
  const { serviceUrl, apiKey, statePath, origin } = options;
  const admin = new ForgeClient({ baseUrl: serviceUrl, credential: apiKey });
  const known: Record<string, string> = existsSync(statePath) ? JSON.parse(readFileSync(statePath, 'utf8')) : {};
  const users: DemoUser[] = [];
  for (const { connect, install, ...person } of SEEDS) {
    const existing = known[person.slug];
    if (existing && (await exists(admin, existing))) {
      users.push({ ...person, forgeId: existing });
      continue;
    }
    const forgeId = await createOrFind(admin, person.name, person.email);
    const { token } = await admin.getUserToken(forgeId);
    const asUser = new ForgeClient({ baseUrl: serviceUrl, credential: token });
    for (const { integration, values } of connect) {
      if (values) await asUser.saveCredential(integration, values);
      else await consentToLocalOAuth(serviceUrl, token, integration, origin);
    }
    for (const parentId of install) await asUser.installWorkflow(parentId).catch(ignoreConflict);
    users.push({ ...person, forgeId });
  }
  mkdirSync(dirname(statePath), { recursive: true });
  writeFileSync(statePath, `${JSON.stringify(Object.fromEntries(users.map((u) => [u.slug, u.forgeId])), null, 2)}\n`);
  return users;
}

async function exists(admin: ForgeClient, userId: string): Promise<boolean> {
  try {
    await admin.getUser(userId);
    return true;
  } catch (error) {
    if (error instanceof ForgeApiError && error.status === 404) return false;
    throw error;
  }
}

/** A fresh user, or the one with that e-mail left from an earlier run (e-mails are unique). */
async function createOrFind(admin: ForgeClient, name: string, email: string): Promise<string> {
  try {
    return (await admin.createUser({ name, email })).userId;
  } catch (error) {
    if (!(error instanceof ForgeApiError && error.status === 409)) throw error;
    const found = (await admin.listUsers()).find((u) => u.email === email);
    if (!found) throw error;
    return found._id;
  }
}

const ignoreConflict = (error: unknown) => {
  if (!(error instanceof ForgeApiError && error.status === 409)) throw error;
};

/**
 * Walks the service's local OAuth flow as the user's browser would (start, consent "Allow",
 * callback, then the element's confirmation of the grant the callback posts to the page), so
 * the seeded user starts with that integration connected.
 */
async function consentToLocalOAuth(serviceUrl: string, token: string, integration: string, origin: string) {
  const step = async (url: string, init: RequestInit = {}) => {
    const response = await fetch(url, { redirect: 'manual', ...init });
    if (response.status >= 400) {
      throw new Error(`Seeding ${integration}: ${url} answered ${response.status}: ${await response.text()}`);
    }
    return response;
  };
  const start = await step(`${serviceUrl}/forge/2021-12/credentials/${integration}/oauth`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, Origin: origin },
  });
  const { url } = (await start.json()) as { url: string };
  const consentPage = new URL((await step(url)).headers.get('location')!, url);
  const decided = await step(consentPage.href, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'decision=allow',
  });
  const callback = new URL(decided.headers.get('location')!, consentPage);
  const page = await (await step(callback.href)).text();
  const grant = /"grant":"([\w-]+)"/.exec(page)?.[1];
  if (!grant) throw new Error(`Seeding ${integration}: the OAuth callback allowed nothing.`);
  await step(`${serviceUrl}/forge/2021-12/credentials/${integration}/oauth/confirm`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, Origin: origin, 'Content-Type': 'application/json' },
    body: JSON.stringify({ grant }),
  });
}
