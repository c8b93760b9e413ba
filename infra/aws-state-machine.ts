/** The ASL deployed to AWS: the runs state machine in `aws` mode, bound to the stack's function ARNs. */
import type { FunctionName } from './stack.ts';

export function awsStateMachine(functionArns: Record<FunctionName, string>, bucket: string): object {
  // Wired to infra/state-machine.ts when the runs layer lands.
  return { functionArns, bucket };
}
