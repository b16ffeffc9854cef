// Writes docs/openapi.json, the service's OpenAPI 3.1 document, from the same route schemas the
// service validates and serializes with (it serves the same document at
// GET /forge/2021-12/openapi.json). `npm run build` runs it, so the file never drifts.
import { writeFileSync } from 'node:fs';
import { buildService } from '../server/dist/app.js';

// No API key given: one is generated in the throw-away in-memory database; the document needs none.
const service = await buildService({ db: ':memory:' });
await service.app.ready();
writeFileSync('docs/openapi.json', `${JSON.stringify(service.app.swagger(), null, 2)}\n`);
await service.app.close();
await service.store.close();
