import { createRequire } from 'node:module';
import { forCommandLine } from '../llm/config.ts';
import { intFlag, parse, UsageError } from './args.ts';
import { REPORT_USAGE, RUN_USAGE, VERIFY_USAGE } from './run-usage.ts';
import { ACT_USAGE, EXTRACT_USAGE, OBSERVE_USAGE, SNAPSHOT_USAGE } from './usage.ts';
import { WORKER_USAGE } from './worker-usage.ts';

const COMMON_HELP =
  '  --model provider/model   e.g. openai/gpt-4.1-mini (default: BROWSERFN_MODEL; none = zero-token tier only)\n' +
  '  --selector S             only the part of the page under this CSS or XPath selector\n' +
  '  --vision fallback|always|never  when to send the marked screenshot to the model (default fallback)\n' +
  '  --budget TOKENS          page text per model call (default 6000)';

const ops = () => import('./ops.ts');

async function serveCommand(argv: string[]): Promise<number> {
  const { flags } = parse(argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    verbose: { type: 'boolean' },
  });
  const port = intFlag(flags, 'port');
  const { startServer } = await import('../api/serve.ts');
  const server = await startServer({
    ...(port ? { port } : {}),
    ...(typeof flags.host === 'string' ? { host: flags.host } : {}),
    ...(flags.verbose ? { logLevel: 'debug' as const } : {}),
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

const SERVE_USAGE = 'browserfn serve [--port 8787] [--host 127.0.0.1] [--verbose]';

/** Usage line and what the command does: `browserfn <command> --help` prints both. */
const COMMANDS: Record<string, { run: () => Promise<Command>; usage: string; about: string }> = {
  snapshot: {
    run: async () => (await import('./snapshot.ts')).snapshotCommand,
    usage: SNAPSHOT_USAGE,
    about:
      'Prints what a model would read of the page: one element per line with its id, then a stats line.\n' +
      '  --selector S      only the part of the page under this CSS or XPath selector\n' +
      '  --budget TOKENS   keep the outline under this many tokens (what matters first)\n' +
      '  --chunk N         the Nth viewport-sized part of the page\n' +
      '  --som out.png     also write the screenshot with the element ids drawn on it\n' +
      '  --json            the whole snapshot as JSON (every id with locator, role, name, URL, box)',
  },
  act: {
    run: async () => (await ops()).actCommand,
    usage: ACT_USAGE,
    about:
      'Does what the instruction says on the page and prints the result as JSON (exit 1 if it failed).\n' +
      '  --var name=value  a secret used as %name% in the instruction; never sent to the model\n' +
      '  --no-cache        do not replay or record cached actions\n' +
      COMMON_HELP,
  },
  observe: {
    run: async () => (await ops()).observeCommand,
    usage: OBSERVE_USAGE,
    about: `Lists the elements that match the instruction (every interactive one without), as JSON.\n${COMMON_HELP}`,
  },
  extract: {
    run: async () => (await ops()).extractCommand,
    usage: EXTRACT_USAGE,
    about:
      'Reads typed data from the page and prints it as JSON (needs a model unless no instruction is given).\n' +
      '  --schema file.json  JSON Schema of the data to return\n' +
      COMMON_HELP,
  },
  serve: {
    run: async () => serveCommand,
    usage: SERVE_USAGE,
    about:
      'Serves the HTTP API (and a demo page at /demo) with the embedded browser.\n' +
      '  --port N     port to listen on (default 8787, or PORT)\n' +
      '  --host H     address to bind (default 127.0.0.1 without BROWSERFN_API_KEYS, else 0.0.0.0)\n' +
      '  --verbose    log debug lines too (JSON on stderr; or BROWSERFN_LOG_LEVEL=debug|info|warn|error)',
  },
  run: {
    run: async () => (await import('./run.ts')).runCommand,
    usage: RUN_USAGE,
    about:
      'Runs one task over many URLs (one sample per row) through the run state machine, with a progress bar.\n' +
      '  --task spec.json    the task spec (goal, schema, required fields, limits)\n' +
      '  --input file.csv    samples: sample_id,url plus input columns; or --url URL for one\n' +
      '                      (neither when the spec has a discovery block: its listings give the samples)\n' +
      '  --prompt "…"        let the model write the spec and the samples (saved as generated_task_spec.json)\n' +
      '  --concurrency N     samples at once\n' +
      '  --resume RUN_ID     skip finished samples and continue the others from their checkpoints\n' +
      '  --out DIR           where runs and evidence are kept (default: the current directory)',
  },
  worker: {
    run: async () => (await import('./worker.ts')).workerCommand,
    usage: WORKER_USAGE,
    about:
      'Polls an SQS queue and runs each job message (a task and its URLs) as samples, as the queue Lambda does;\n' +
      'results go to the stores (BROWSERFN_TABLE / BROWSERFN_BUCKET, else local files), once per job and URL.\n' +
      '  --queue URL   the job queue (BROWSERFN_SQS_ENDPOINT for an SQS-compatible server)\n' +
      '  --dlq URL     where failing messages go with their reason (default BROWSERFN_DLQ_URL)\n' +
      '  --idle N      stop after N empty polls (default: run until Ctrl-C)',
  },
  report: {
    run: async () => (await import('./run-tools.ts')).reportCommand,
    usage: REPORT_USAGE,
    about: 'Writes the self-contained HTML report of a run and prints its path.',
  },
  verify: {
    run: async () => (await import('./run-tools.ts')).verifyCommand,
    usage: VERIFY_USAGE,
    about:
      'Re-hashes every evidence file of a run against its hash-chained manifest; names the first entry that\n' +
      'no longer matches (edited, removed, reordered, added). Exit 1 when the evidence does not verify.',
  },
  workflow: {
    run: async () => (await import('./workflow.ts')).workflowCommand,
    usage:
      'browserfn workflow run <id|file.json> <url> [--version N] | compile <run-id>[/<sample-id>] | <action_log.json> | plan "<prompt>" | show <id|file.json> [--run <run-id>/<sample-id>] [--open] | validate <file.json> | export <id|file.json> --playwright | save <file.json> | list',
    about:
      'Workflows (see README "Workflows"): run one on a URL (data, then alias / status / resolvedBy / tokens per node;\n' +
      'exit 1 when it failed; a confirmed heal of a stored one is saved as its next version), compile a finished\n' +
      'sample or a file of acts into a saved workflow, plan one from words with the model, validate a document\n' +
      '(every problem named by node alias and field), export a playwright-core script, save a file, list them.\n' +
      '  run <id|file.json> <url>  --input k=v (repeatable)  --var name=value (a %secret%)  --version N  --model M\n' +
      "  compile <run-id>[/<sample-id>] | <action_log.json>  --id ID (next version of it)  --url U (acts file)  --out DIR (the run's)\n" +
      '  plan "<prompt>"  --url U  --input k=v  --save [--id ID]  --out f.json  --model M\n' +
      '  show <id|file.json>  --version N  --run <run-id>/<sample-id>  --out f.html  --open  (the graph page)\n' +
      '  export <id|file.json> --playwright [--version N] [--out f.ts]   save <file.json> [--id ID]',
  },
  judge: {
    run: async () => (await import('./judge.ts')).judgeCommand,
    usage: 'browserfn judge <run-id> [--sample ID] [--model M] [--out DIR]',
    about:
      "Rules on each finished sample of a run from its evidence alone (the task's key points, the action log,\n" +
      'the data, the screenshots): pass, fail or uncertain, with the first failing step and any CAPTCHA or login\n' +
      'wall; verdicts go into the evidence, combined.csv and the report. Exit 1 unless every sample passes.\n' +
      '  --sample ID   judge this sample only\n' +
      '  --model M     the judge model (default BROWSERFN_MODEL; without one, rules decide what they can)',
  },
  scenario: {
    run: async () => (await import('./scenario.ts')).scenarioCommand,
    usage:
      'browserfn scenario <url> [steps.yaml|steps.json] [--step "…"]… [--model M] [--var name=value]… [--vision text|som] [--compile f.json] [--playwright f.ts]',
    about:
      'Carries out a step list on the page, proving each step (verify / check / ensure steps with in-page checks); at most\n' +
      '5 model decisions per step, then stuck. Prints each iteration, then the result. Exit 0 only when every step passed.\n' +
      '  steps file        YAML or JSON: a list of steps, or { steps: [...] }; a step is "text" or { do, expect }\n' +
      '  --step "…"        one step (repeatable; after the file\'s steps)\n' +
      '  --vision som      the model also sees the viewport with numbered markers (default text: outline only)\n' +
      '  --compile f.json  a passed scenario as a workflow that replays with zero tokens\n' +
      '  --playwright f.ts a passed scenario as a standalone playwright-core script\n' +
      '  --var name=value  a secret used as %name%; never sent to the model',
  },
  repair: {
    run: async () => (await import('./repair.ts')).repairCommand,
    usage:
      'browserfn repair <script.ts|script.js> --url <url> [--out fixed.ts] [--error "message" --line N] [--allow-assertion-changes] [--var name=value]… [--model M] [--step-timeout ms]',
    about:
      'Repairs a broken Playwright script on the page: its steps run (read, not executed as code) until the broken one,\n' +
      'which the model repairs there and proves by running it, or deletes when it is already done or obsolete; the script\n' +
      'goes on. Each repair is printed with its diff. Exit 0 when repaired (or nothing was broken).\n' +
      '  --out f.ts                 the repaired script (default: beside it, name.repaired.ts; never over the original)\n' +
      '  --error "…" --line N       the failure as you saw it (default: the first step that fails here)\n' +
      "  --allow-assertion-changes  apply a repair that changes an assertion's expected value (default: report it)\n" +
      '  --step-timeout ms          per script step (default 5000)',
  },
  explore: {
    run: async () => (await import('./explore.ts')).exploreCommand,
    usage:
      'browserfn explore <url> "<goal>" [--var name=value]… [--max-iterations N] [--out DIR] [--model M]',
    about:
      'Explores the app for the journeys a goal asks for and records each one, proved by a verification, as a scenario.\n' +
      'Stops stuck at a CAPTCHA, or at a login when no test credentials were given. Exit 0 when it completed.\n' +
      '  --var name=value    test credentials / data, typed by the model as %name% (it never sees the value)\n' +
      '  --max-iterations N  model decisions in all (default 20)\n' +
      '  --out DIR           <id>.scenario.json per journey, <id>.workflow.json per proved one',
  },
  agent: {
    run: async () => (await import('./agent.ts')).agentCommand,
    usage:
      'browserfn agent <url> "<goal>" [--schema f.json] [--max-steps N] [--out DIR] [--model M] [--var name=value]… [--require field]… [--step "scenario step"]… [--cua]',
    about:
      'Carries one goal out on the page step by step with the model (observe, decide, act, check), printing each\n' +
      'step as it happens (thought, actions, outcome) and the result at the end; evidence goes to --out.\n' +
      '  --schema f.json     JSON Schema of the data to return\n' +
      '  --max-steps N       step budget (default 20)\n' +
      '  --require field     a field the result must carry (repeatable)\n' +
      '  --step "…"          scenario mode: one step of a step list (repeatable)\n' +
      '  --cua               computer-use mode: the --model (anthropic/…, openai/…, google/…) works from screenshots\n' +
      '  --var name=value    a secret used as %name%; never sent to the model\n' +
      '  --out DIR           where the run records and evidence are kept (default: the current directory)',
  },
};

const HELP = `browserfn — AI browser automation

Usage:
${Object.values(COMMANDS)
  .map((c) => `  ${c.usage}`)
  .join('\n')}

<url|file> is an http(s) URL, or a local HTML file (./page.html or file:///…) on the command line.
\`browserfn <command> --help\` says more about one command.

Environment: BROWSERFN_MODEL, OPENAI_API_KEY, ANTHROPIC_API_KEY, BROWSERFN_CDP_URL, BROWSERFN_ALLOW_HOSTS,
BROWSERFN_ALLOW_PRIVATE, BROWSERFN_CACHE_DIR, BROWSERFN_API_KEYS, PORT, HOST`;

const wantsHelp = (argv: string[]) => argv.includes('--help') || argv.includes('-h');

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${HELP}\n`);
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (command && wantsHelp(rest)) {
    process.stdout.write(`usage: ${command.usage}\n\n${command.about}\n`);
    return 0;
  }
  try {
    if (!command)
      throw new UsageError(`unknown command "${name}" (try: ${Object.keys(COMMANDS).join(', ')})`);
    const run = await command.run();
    return await run(rest, (s) => process.stdout.write(`${s}\n`));
  } catch (err) {
    const e = err as Error;
    // One line: what was wrong, and where the usage is.
    const usage = e instanceof UsageError && command ? ` (usage: browserfn ${name} --help)` : '';
    process.stderr.write(`browserfn: ${forCommandLine(e.message.split('\n')[0] ?? '')}${usage}\n`);
    return e instanceof UsageError ? 2 : 1;
  }
}

const code = await main(process.argv.slice(2));
/**
 * No browser (and no guard proxy, which only serves one) can be open unless Playwright was loaded: a
 * command that never needed it (help, a usage error, verify, workflow validate…) exits without
 * loading it just to find nothing to close. Playwright is CommonJS, so it is in the require cache.
 */
const playwrightLoaded = () =>
  Object.keys(createRequire(import.meta.url).cache).some((path) => /[\\/]playwright-core[\\/]/.test(path));

if (playwrightLoaded()) {
  // Whatever a command left open (a browser after a failed navigation, the guard proxy) ends here.
  const { closeSharedBrowser } = await import('../browser/session.ts');
  const { closeGuardProxies } = await import('../browser/guard-proxy.ts');
  // The work is done and saved by now: a browser that does not close in time must not hold the exit
  // (Playwright kills the browser process when this process exits).
  const CLOSE_MS = 5000;
  await Promise.race([
    Promise.allSettled([closeSharedBrowser(), closeGuardProxies()]),
    new Promise((r) => setTimeout(r, CLOSE_MS).unref()),
  ]);
}
process.exit(code);
