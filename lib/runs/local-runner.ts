/**
 * Runs the run state machine on this machine: the ASL of infra/state-machine.ts in its local mode (the
 * deployed states, with an inline Map instead of the Distributed one over S3), executed by
 * aws-local-stepfunctions with the task states bound to our handlers by name.
 */
import { StateMachine } from 'aws-local-stepfunctions';
import { LOCAL_FUNCTIONS, runStateMachine, STATE } from '../../infra/state-machine.ts';
import type { RunHandlers } from './handlers.ts';
import type { ExecutionInput } from './run-records.ts';

// aws-local-stepfunctions 3 calls Promise.withResolvers, which Node 20 lacks.
if (typeof (Promise as { withResolvers?: unknown }).withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value<T>() {
      let resolve!: (v: T | PromiseLike<T>) => void;
      let reject!: (e: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

export interface LocalRunOptions {
  /** Per-slice time limit in the definition (default 600 s; the handlers stop well before). */
  sliceTimeoutSeconds?: number;
  /** Retry pauses in ms instead of the definition's seconds (tests). */
  retryPauseMs?: number;
}

export interface LocalExecution {
  result: Promise<unknown>;
  abort: () => void;
}

const running = new Map<string, LocalExecution>();

/** Starts one execution; `result` settles when Merge has run (or the execution failed / was aborted). */
export function startLocalRun(
  input: ExecutionInput,
  handlers: RunHandlers,
  options: LocalRunOptions = {},
): LocalExecution {
  const definition = runStateMachine({
    mode: 'local',
    functions: LOCAL_FUNCTIONS,
    ...(options.sliceTimeoutSeconds ? { sliceTimeoutSeconds: options.sliceTimeoutSeconds } : {}),
  });
  const machine = new StateMachine(definition as never, {
    validationOptions: { checkArn: true, checkPaths: true },
  });
  const local = (fn: (event: unknown) => Promise<unknown>) => ((event: unknown) => fn(event)) as never;
  const pauses =
    options.retryPauseMs !== undefined
      ? Object.fromEntries(
          [STATE.plan, STATE.discover, STATE.slice, STATE.crash, STATE.judge, STATE.merge].map((s) => [
            s,
            options.retryPauseMs!,
          ]),
        )
      : undefined;
  const execution = machine.run(input as never, {
    overrides: {
      taskResourceLocalHandlers: {
        [STATE.plan]: local(handlers.plan),
        [STATE.discover]: local(handlers.discover),
        [STATE.slice]: local(handlers.slice),
        // Record crash is the slice function called with the caught error (as on Lambda).
        [STATE.crash]: local(handlers.slice),
        // So is the Judge state: the slice function called with `judge: true`.
        [STATE.judge]: local(handlers.slice),
        [STATE.merge]: local(handlers.merge),
      },
      ...(pauses ? { retryIntervalOverrides: pauses } : {}),
    },
    noThrowOnAbort: true,
  });
  const key = `${input.tenant}\n${input.runId}`;
  const handle: LocalExecution = {
    result: execution.result.finally(() => {
      if (running.get(key) === handle) running.delete(key);
    }),
    abort: () => execution.abort(),
  };
  running.set(key, handle);
  return handle;
}

/** Stops a run's local execution if this process runs it; true when one was stopped. */
export function abortLocalRun(tenant: string, runId: string): boolean {
  const handle = running.get(`${tenant}\n${runId}`);
  if (!handle) return false;
  handle.abort();
  return true;
}

/** Whether this process is executing the run right now. */
export function isLocalRunActive(tenant: string, runId: string): boolean {
  return running.has(`${tenant}\n${runId}`);
}

/** How many runs of this tenant this process is executing right now. */
export function activeLocalRuns(tenant: string): number {
  let n = 0;
  for (const key of running.keys()) if (key.startsWith(`${tenant}\n`)) n++;
  return n;
}
