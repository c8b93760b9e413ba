/**
 * Reading a workflow (or any JSON) the CLI was pointed at: a missing file or one that is not JSON is a
 * one-line usage error naming the file, and a workflow that fails the schema names each issue.
 */
import { readFile } from 'node:fs/promises';
import type { Workflow } from '../workflows/schema.ts';
import { describeIssue, validateWorkflow } from '../workflows/validate.ts';
import { UsageError } from './args.ts';

/** A workflow argument is a file when it names one (`.json` or a path), else a stored workflow's id. */
export const looksLikeFile = (arg: string) => arg.endsWith('.json') || arg.includes('/');

export async function readJsonFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`${file}: missing`);
    throw err;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${file}: not JSON`);
  }
}

export async function workflowFromFile(file: string): Promise<Workflow> {
  const checked = validateWorkflow(await readJsonFile(file));
  if (!checked.ok) throw new UsageError(`${file}: ${checked.issues.map(describeIssue).join('; ')}`);
  return checked.workflow;
}
