/**
 * Where the CLI keeps runs and evidence. Apart from run.ts so that commands which only read them
 * (verify, report, workflow, judge) do not load the run machinery (browser, models) to start.
 */
import { join } from 'node:path';
import { LocalEvidenceStore } from '../store/local-evidence-store.ts';
import { LocalRunMemoryStore } from '../store/local-run-memory.ts';
import { LocalRunStore } from '../store/local-run-store.ts';
import type { Flags } from './args.ts';

/** The CLI's tenant: keys and folders start with it like everywhere else. */
export const CLI_TENANT = 'local';

export function localStores(flags: Flags) {
  const base = typeof flags.out === 'string' ? flags.out : process.cwd();
  return {
    base,
    runStore: new LocalRunStore(join(base, '.browserfn', 'runs')),
    runMemory: new LocalRunMemoryStore(join(base, '.browserfn', 'runs')),
    evidence: new LocalEvidenceStore(join(base, 'evidence')),
  };
}
