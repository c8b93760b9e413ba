import { sharedBrowser } from '../lib/browser/session.ts';
import { withInvocationTmp } from './invocation-tmp.ts';
import { handlers } from './run-handlers.ts';

/**
 * Step Functions task `Slice` (and `Record crash`, which sends the caught error as `crash`):
 * `{ tenant, runId, sampleId }` → `{ final, status }`. A thrown error reaches the state machine,
 * which retries service errors and turns anything else into the sample's `failed` result.
 */
export const handler = (event: unknown) =>
  withInvocationTmp(() => handlers.slice(event), { warm: sharedBrowser });
