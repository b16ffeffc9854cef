import { buildService, startService } from '/work/wt-service/server/app.ts';
import autocannon from 'autocannon';
const log = process.env.LOG === '1';
const s = await startService({ port: 0, db: ':memory:', scheduler: false, logStream: log ? { write() {} } : undefined });
const r = await autocannon({ url: `${s.url}/forge/2021-12/workflow`, headers: { Authorization: `Bearer ${s.apiKey}` }, connections: 10, duration: 5 });
console.log('log', log, 'rps', Math.round(r.requests.average), 'p99', r.latency.p99, r.non2xx);
const r2 = await autocannon({ url: `${s.url}/healthz`, connections: 10, duration: 3 });
console.log('healthz rps', Math.round(r2.requests.average));
await s.close();
