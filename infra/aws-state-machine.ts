/** The ASL deployed to AWS: the runs state machine in `aws` mode, bound to the stack's function ARNs. */
import { FUNCTIONS, type FunctionName } from './stack.ts';
import { type Asl, runStateMachine } from './state-machine.ts';

/** How much longer the Slice state waits than the slice Lambda may run (invocation overhead). */
export const SLICE_TIMEOUT_SLACK_SECONDS = 30;

export function awsStateMachine(functionArns: Record<FunctionName, string>): Asl {
  return runStateMachine({
    mode: 'aws',
    // The slice Lambda stops its own work in time (BROWSERFN_SLICE_MS); the state's timeout must not
    // fire first, or a slice still running is started a second time.
    sliceTimeoutSeconds: FUNCTIONS.agentSlice.timeoutSeconds + SLICE_TIMEOUT_SLACK_SECONDS,
    functions: {
      plan: functionArns.plan,
      discover: functionArns.discover,
      slice: functionArns.agentSlice,
      merge: functionArns.merge,
    },
  });
}
