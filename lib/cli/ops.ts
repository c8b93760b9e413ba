import { readFile } from 'node:fs/promises';
import { forCommandLine } from '../llm/config.ts';
import { parse, UsageError } from './args.ts';
import { pageArg } from './page-arg.ts';

/** The browser, the models and the ops: loaded once the arguments are checked. */
const opRun = () => import('./op-run.ts');

const OPTIONS = {
  model: { type: 'string' },
  var: { type: 'string', multiple: true },
  selector: { type: 'string' },
  vision: { type: 'string' },
  budget: { type: 'string' },
  schema: { type: 'string' },
  'no-cache': { type: 'boolean' },
} as const;

export async function actCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, OPTIONS);
  const page = pageArg(positionals[0]);
  const instruction = positionals[1];
  if (!instruction?.trim()) throw new UsageError('missing "<instruction>"');
  const { act, explainGoneAct, withContext } = await opRun();
  const acted = await withContext(page, flags, (ctx) => act(ctx, instruction));
  // A page that answered 404/410 is why nothing was found on it (the rule the API uses too).
  const explained = explainGoneAct(acted);
  const result =
    explained === acted && acted.error
      ? { ...acted, error: { ...acted.error, message: forCommandLine(acted.error.message) } }
      : explained;
  out(JSON.stringify(result, null, 2));
  // The JSON is for programs; a failure also gets its one line for the person at the terminal.
  if (!result.success)
    process.stderr.write(
      `browserfn: ${result.error ? `${result.error.kind}: ${result.error.message}` : result.message}\n`,
    );
  return result.success ? 0 : 1;
}

export async function observeCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, OPTIONS);
  const page = pageArg(positionals[0]);
  const { observe, withContext } = await opRun();
  const result = await withContext(page, flags, (ctx) => observe(ctx, positionals[1]));
  out(JSON.stringify(result, null, 2));
  return 0;
}

export async function extractCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, OPTIONS);
  const page = pageArg(positionals[0]);
  let schema: Record<string, unknown> | undefined;
  if (typeof flags.schema === 'string') {
    let text: string;
    try {
      text = await readFile(flags.schema, 'utf8');
    } catch {
      throw new UsageError(`--schema: cannot read ${flags.schema}`);
    }
    try {
      schema = JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      throw new UsageError(`--schema: ${flags.schema} is not valid JSON (${(err as Error).message})`);
    }
  }
  const { extract, withContext } = await opRun();
  const result = await withContext(page, flags, (ctx) => extract(ctx, positionals[1], schema));
  out(JSON.stringify(result, null, 2));
  return 0;
}
