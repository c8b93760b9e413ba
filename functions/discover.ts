import { sharedBrowser } from '../lib/browser/session.ts';
import { withInvocationTmp } from './invocation-tmp.ts';
import { handlers } from './run-handlers.ts';

/**
 * Step Functions task `Discover`: `{ tenant, runId, concurrency }` → the Map's input (sample ids, or on
 * AWS the S3 key the Distributed Map reads them from). The URLs stay in the evidence store.
 */
export const handler = (event: unknown) =>
  withInvocationTmp(() => handlers.discover(event), { warm: sharedBrowser });
