import { randomUUID } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Catalog, needsCredential } from '../server/catalog/catalog.js';
import { DEMO_CATALOG } from '../server/paths.js';
import { SecretBox } from '../server/secrets.js';
import { Store } from '../server/store/store.js';

/**
 * A user who has connected every integration of the demo's first workflow and installed it, so
 * that opening the modal for it goes straight to its settings (the step the bench times).
 */
export async function seedModalUser(dbPath: string): Promise<{ userId: string; parentId: string }> {
  const parent = new Catalog(DEMO_CATALOG).list()[0]!;
  const store = await Store.open(dbPath);
  try {
    const secrets = SecretBox.open(dbPath);
    const userId = await store.users.create('Bench user', 'bench-modal@example.com');
    for (const integration of parent.integrations.filter(needsCredential)) {
      const secret =
        integration.type === 'oauth2'
          ? { kind: 'oauth2', accessToken: 'bench-token', scope: 'default' }
          : {
              kind: 'parameters',
              values: Object.fromEntries((integration.requiredParameters ?? []).map((p) => [p.name, 'bench'])),
            };
      await store.credentials.save(userId, integration.name, secrets.seal(secret));
    }
    await store.children.create(userId, parent.workflowId, {});
    return { userId, parentId: parent.workflowId };
  } finally {
    await store.close();
  }
}

/**
 * A catalog of `count` parent workflows over the demo's integrations (and a copy of its icons),
 * each with a trigger, a variable block and an HTTP block, named and described like real ones.
 */
export function writeLargeCatalog(dir: string, count: number): string {
  const demo = JSON.parse(readFileSync(DEMO_CATALOG, 'utf8')) as { integrations: Array<{ name: string }> };
  cpSync(join(dirname(DEMO_CATALOG), 'icons'), join(dir, 'icons'), { recursive: true });
  const names = demo.integrations.map((i) => i.name);
  const workflows = Array.from({ length: count }, (_, n) => {
    const from = names[n % names.length]!;
    const to = names[(n + 1 + (Math.floor(n / names.length) % (names.length - 1))) % names.length]!;
    return {
      workflowId: `bench-${String(n).padStart(4, '0')}`,
      name: `Workflow ${n + 1}: send ${from} events to ${to}`,
      description: `When something happens in ${from}, this workflow records it in ${to} within a minute.`,
      integrations: [from, to],
      blocks: [
        { name: 'Event received', id: randomUUID(), type: 'webhook', integration: from, parameters: {} },
        {
          name: 'Settings',
          id: randomUUID(),
          type: 'variables',
          parameters: {
            variables: [
              { uuid: randomUUID(), name: 'destination', value: '#general', description: 'Where the event goes.' },
              { uuid: randomUUID(), name: 'batchSize', value: 10, description: 'Events sent at once.' },
            ],
          },
        },
        { name: 'Send', id: randomUUID(), type: 'http', integration: to, parameters: { method: 'POST' } },
      ],
    };
  });
  const path = join(dir, 'catalog-large.json');
  writeFileSync(path, JSON.stringify({ integrations: demo.integrations, workflows }));
  return path;
}

/**
 * A catalog of `count` apps (the demo's icons, eight categories, a description each) and as many
 * workflows, the nth using apps n and n + 1: `<forge-integration-list>` shows every app once.
 */
export function writeAppsCatalog(dir: string, count: number): string {
  const demo = JSON.parse(readFileSync(DEMO_CATALOG, 'utf8')) as { integrations: Array<{ icon: string }> };
  cpSync(join(dirname(DEMO_CATALOG), 'icons'), join(dir, 'icons'), { recursive: true });
  const categories = ['Chat', 'CRM', 'Payments', 'Marketing', 'Productivity', 'Support', 'Storage', 'Analytics'];
  const integrations = Array.from({ length: count }, (_, n) => ({
    name: `app-${String(n).padStart(3, '0')}`,
    displayName: `App ${n + 1}`,
    description: `What App ${n + 1} does, in one line that a card shows under its name.`,
    category: categories[n % categories.length],
    icon: demo.integrations[n % demo.integrations.length]!.icon,
    type: n % 3 === 0 ? 'apiKey' : 'oauth2',
    ...(n % 3 === 0
      ? { requiredParameters: [{ name: 'apiKey', displayName: 'API key', description: 'Its key.' }] }
      : {}),
  }));
  const workflows = integrations.map((app, n) => ({
    workflowId: `apps-${String(n).padStart(3, '0')}`,
    name: `Workflow ${n + 1}`,
    integrations: [app.name, integrations[(n + 1) % count]!.name],
    blocks: [{ name: 'Event received', id: randomUUID(), type: 'webhook', integration: app.name, parameters: {} }],
  }));
  const path = join(dir, 'catalog-apps.json');
  writeFileSync(path, JSON.stringify({ integrations, workflows }));
  return path;
}

/** A user who has installed every tenth workflow of the catalog, so the list shows switches among its rows. */
export async function seedListUser(dbPath: string, catalogPath: string): Promise<string> {
  const parents = new Catalog(catalogPath).list();
  const store = await Store.open(dbPath);
  try {
    const userId = await store.users.create('Bench user', 'bench-list@example.com');
    await store.transaction(async (tx) => {
      for (const [n, parent] of parents.entries()) {
        if (n % 10 === 0) await tx.children.create(userId, parent.workflowId, {});
      }
    });
    return userId;
  } finally {
    await store.close();
  }
}
