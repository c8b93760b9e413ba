import { intFlag, parse, UsageError } from './args.ts';
import { SNAPSHOT_USAGE, snapshotCommand } from './snapshot.ts';

const ops = () => import('./ops.ts');

async function serveCommand(argv: string[]): Promise<number> {
  const { flags } = parse(argv, { port: { type: 'string' }, host: { type: 'string' } });
  const port = intFlag(flags, 'port');
  const { startServer } = await import('../api/serve.ts');
  const server = await startServer({
    ...(port ? { port } : {}),
    ...(typeof flags.host === 'string' ? { host: flags.host } : {}),
  });
  await new Promise<void>((resolve) => {
    const stop = () => {
      void server.close().then(resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
}

type Command = (argv: string[], out: (s: string) => void) => Promise<number>;

const COMMANDS: Record<string, { run: () => Promise<Command>; usage: string }> = {
  snapshot: { run: async () => snapshotCommand, usage: SNAPSHOT_USAGE },
  act: {
    run: async () => (await ops()).actCommand,
    usage: 'browserfn act <url> "<instruction>" [--model M] [--var name=value]…',
  },
  observe: {
    run: async () => (await ops()).observeCommand,
    usage: 'browserfn observe <url> ["<instruction>"] [--model M]',
  },
  extract: {
    run: async () => (await ops()).extractCommand,
    usage: 'browserfn extract <url> ["<instruction>"] [--schema file.json] [--model M]',
  },
  agent: {
    run: async () => (await import('./agent.ts')).agentCommand,
    usage:
      'browserfn agent <url> "<goal>" [--schema f.json] [--max-steps N] [--out DIR] [--model M] [--var name=value]… [--require field]… [--step "scenario step"]…',
  },
  serve: { run: async () => serveCommand, usage: 'browserfn serve [--port 8787] [--host 127.0.0.1]' },
};

const HELP = `browserfn — AI browser automation

Usage:
${Object.values(COMMANDS)
  .map((c) => `  ${c.usage}`)
  .join('\n')}

Environment: BROWSERFN_MODEL, OPENAI_API_KEY, ANTHROPIC_API_KEY, BROWSERFN_CDP_URL, BROWSERFN_ALLOW_HOSTS`;

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${HELP}\n`);
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  try {
    if (!command)
      throw new UsageError(`unknown command "${name}" (try: ${Object.keys(COMMANDS).join(', ')})`);
    const run = await command.run();
    return await run(rest, (s) => process.stdout.write(`${s}\n`));
  } catch (err) {
    const e = err as Error;
    const usage = e instanceof UsageError && command ? `\nusage: ${command.usage}` : '';
    process.stderr.write(`browserfn: ${e.message.split('\n')[0]}${usage}\n`);
    return e instanceof UsageError ? 2 : 1;
  }
}

const code = await main(process.argv.slice(2));
// Whatever a command left open (a browser after a failed navigation, the guard proxy) ends here.
const { closeSharedBrowser } = await import('../browser/session.ts');
const { closeGuardProxies } = await import('../browser/guard-proxy.ts');
await Promise.allSettled([closeSharedBrowser(), closeGuardProxies()]);
process.exit(code);
