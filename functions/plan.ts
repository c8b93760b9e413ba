import { withInvocationTmp } from './invocation-tmp.ts';
import { handlers } from './run-handlers.ts';

/** Step Functions task `Plan`: `{ tenant, runId, prompt }` → the run's input with the planned samples. */
export const handler = (event: unknown) => withInvocationTmp(() => handlers.plan(event));
