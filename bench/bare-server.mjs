// The baseline: a bare Fastify JSON route, nothing else, as plain JavaScript (no loader in the way).
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/bare', async () => ({ status: 200, message: 'bare' }));
const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stderr.write(`listening on ${address}\n`);
