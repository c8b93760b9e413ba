import { withInvocationTmp } from './invocation-tmp.ts';
import { handlers } from './run-handlers.ts';

/** Step Functions task `Merge`: `{ tenant, runId }` → combined.csv, results.json, totals, manifest head. */
export const handler = (event: unknown) => withInvocationTmp(() => handlers.merge(event));
