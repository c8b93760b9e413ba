/** The ASL deployed to AWS: the runs state machine in `aws` mode, bound to the stack's function ARNs. */
import type { FunctionName } from './stack.ts';
import { type Asl, runStateMachine } from './state-machine.ts';

export function awsStateMachine(functionArns: Record<FunctionName, string>): Asl {
  return runStateMachine({
    mode: 'aws',
    functions: {
      plan: functionArns.plan,
      discover: functionArns.discover,
      slice: functionArns.agentSlice,
      merge: functionArns.merge,
    },
  });
}
