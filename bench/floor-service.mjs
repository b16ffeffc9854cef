import Fastify from 'fastify';

/**
 * The floor of the service's throughput rows (issue 29): a bare Fastify route answering
 * `{"data": []}`, with the service's own Fastify, no plugin, hook or logger, run as its own
 * process by the same Node. Nothing the service answers can cost less than this, so each of its
 * rows is read as a ratio to this one, measured in the same run by the same load generator.
 * Prints the line `floor listening on <url>` once it listens (port 0: a free one).
 */
const app = Fastify();
app.get('/floor', async () => ({ data: [] }));
const address = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`floor listening on ${address}`);
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
