import { Command } from 'commander';
import { readEnvironment } from '../wiring/configuration.js';
import { fail } from '../run-command.js';

export function serveCommand(): Command {
  return new Command('serve').description('run the HTTP API (PORT, HOST, DATABASE_URL, HERALD_DATA_DIR)').action(async () => {
    try {
      const env = readEnvironment();
      // Loaded here, not at start: the HTTP stack (Fastify, Ajv, the glue) would slow every other command.
      const { closeOnSignals, startServer } = await import('../wiring/serve.js');
      const server = await startServer(env, {
        onDemoSeeded: (seed, post) => {
          process.stdout.write(
            [
              '',
              `Demo data created for user ${seed.userId}: sandbox accounts ${seed.accounts.map((a) => `${a.platform} ${a.id}`).join(', ')}.`,
              `Demo API key (shown once, keep it): ${seed.key}`,
              `Try it: ${seed.curl}`,
              `A sandbox post is scheduled for ${post.scheduledAt}; a minute from now, see it published: ${post.curl}`,
              '',
            ].join('\n'),
          );
        },
      });
      closeOnSignals(server);
      await server.ready;
      const where = env.databaseUrl === undefined ? `embedded PostgreSQL in ${env.dataDir}` : 'Postgres';
      process.stdout.write(`Herald is ready at ${server.url} (${where})\n`);
    } catch (err) {
      fail(err);
      process.exit();
    }
  });
}
