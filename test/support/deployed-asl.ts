/**
 * Runs the definition deployed to AWS (infra/aws-state-machine.ts: a Distributed Map that reads its
 * items from S3 with `ItemReader` and writes its results to S3 with `ResultWriter`) on
 * aws-local-stepfunctions, which implements neither. No emulator that does installs here (npm and
 * Debian only), so a shim stands in for exactly those two S3 integrations:
 *
 * - `inlineDistributedMaps` (pure) rewrites each such Map: a Task before it reads the items (the
 *   ItemReader's own Parameters, evaluated by the engine) into `$.shimItems`; the Map iterates them
 *   INLINE; a Task after it writes the iterations' outputs where the ResultWriter's Parameters say,
 *   then hands on the Map's input as the Map's `ResultPath: null` would. Everything else — Choice,
 *   Task, Retry, Catch, ItemSelector, MaxConcurrencyPath, the per-sample loop — is the deployed text.
 * - `s3MapIo` is the adapter: the two Tasks' bodies, against a real S3 API (s3rver in the tests).
 *
 * Not stood in for: child executions per item (DISTRIBUTED runs each item as its own execution; here
 * they are iterations of one), `ToleratedFailurePercentage` (dropped: an inline Map fails on the first
 * failed item; our sample loop catches every crash, so no item fails), and the MapRun ARN / manifest
 * fields AWS adds to the result files beyond what is written here.
 */
import { randomUUID } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { StateMachine } from 'aws-local-stepfunctions';
import '../../lib/runs/local-runner.ts'; // Promise.withResolvers for aws-local-stepfunctions on Node 20.

type Asl = Record<string, unknown>;
type State = Record<string, unknown>;

/** ARNs that only name the shim's two Tasks; they are bound to `s3MapIo` by state name. */
export const SHIM_READER_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:shim-item-reader';
export const SHIM_WRITER_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:shim-result-writer';
export const readerState = (map: string) => `${map} · ItemReader`;
export const writerState = (map: string) => `${map} · ResultWriter`;

export interface ShimmedMaps {
  definition: Asl;
  /** The Map states rewritten (their names); empty when the definition has no Distributed Map. */
  maps: string[];
}

/** The deployed definition with each S3-backed Distributed Map turned into reader Task → inline Map → writer Task. */
export function inlineDistributedMaps(definition: Asl): ShimmedMaps {
  // Pure: the caller's definition is left as it was.
  const states = structuredClone(definition.States) as Record<string, State>;
  const out: Record<string, State> = {};
  const maps: string[] = [];
  for (const [name, state] of Object.entries(states)) {
    const reader = state.ItemReader as { Parameters?: Asl; ReaderConfig?: Asl } | undefined;
    if (state.Type !== 'Map' || !reader) {
      out[name] = state;
      continue;
    }
    if (state.ResultPath !== null)
      throw new Error(`${name}: the shim supports a Distributed Map with ResultPath null only`);
    if (state.ItemsPath !== undefined) throw new Error(`${name}: ItemsPath and ItemReader together`);
    maps.push(name);
    const {
      ItemReader: _reader,
      ResultWriter: writer,
      ToleratedFailurePercentage: _tolerated,
      ItemProcessor,
      ...rest
    } = state as State & { ItemProcessor: Asl; ResultWriter?: { Parameters?: Asl } };
    // Whatever pointed at the Map now points at its reader.
    for (const s of Object.values(states)) retarget(s, name, readerState(name));
    if (definition.StartAt === name) definition = { ...definition, StartAt: readerState(name) };
    out[readerState(name)] = {
      Type: 'Task',
      Resource: SHIM_READER_ARN,
      Parameters: { ...reader.Parameters, ReaderConfig: reader.ReaderConfig ?? {} },
      ResultPath: '$.shimItems',
      Next: name,
    };
    out[name] = {
      ...rest,
      ItemsPath: '$.shimItems',
      ItemProcessor: { ...ItemProcessor, ProcessorConfig: { Mode: 'INLINE' } },
      ...(writer ? { ResultPath: '$.shimResults', Next: writerState(name) } : { ResultPath: null }),
    };
    if (writer)
      out[writerState(name)] = {
        Type: 'Task',
        Resource: SHIM_WRITER_ARN,
        Parameters: {
          ...writer.Parameters,
          'Items.$': '$.shimItems',
          'Results.$': '$.shimResults',
          'Input.$': '$',
        },
        // The writer returns the Map's input: what the deployed Map's `ResultPath: null` passes on.
        ...(rest.End ? { End: true } : { Next: rest.Next }),
      };
  }
  return { definition: { ...definition, States: out }, maps };
}

function retarget(state: State, from: string, to: string): void {
  if (state.Next === from) state.Next = to;
  if (state.Default === from) state.Default = to;
  for (const c of (state.Choices as State[] | undefined) ?? []) if (c.Next === from) c.Next = to;
  for (const c of (state.Catch as State[] | undefined) ?? []) if (c.Next === from) c.Next = to;
}

const withoutShim = (input: Asl): Asl => {
  const { shimItems: _i, shimResults: _r, ...rest } = input;
  return rest;
};

/** The shim's two Tasks against an S3 API: items from a JSON array object; results as JSON files. */
export function s3MapIo(s3: S3Client) {
  return {
    async readItems(e: {
      Bucket: string;
      Key: string;
      ReaderConfig?: { InputType?: string; MaxItems?: number };
    }) {
      if (e.ReaderConfig?.InputType !== 'JSON') throw new Error('the shim reads InputType JSON only');
      const got = await s3.send(new GetObjectCommand({ Bucket: e.Bucket, Key: e.Key }));
      const items = JSON.parse(await got.Body!.transformToString()) as unknown;
      if (!Array.isArray(items)) throw new Error(`s3://${e.Bucket}/${e.Key} is not a JSON array`);
      return e.ReaderConfig.MaxItems ? items.slice(0, e.ReaderConfig.MaxItems) : items;
    },
    async writeResults(e: {
      Bucket: string;
      Prefix: string;
      Items: unknown[];
      Results: unknown[];
      Input: Asl;
    }) {
      // AWS writes <Prefix>/<map run id>/manifest.json and SUCCEEDED_0.json (one entry per item).
      const dir = `${e.Prefix.replace(/\/$/, '')}/${randomUUID()}`;
      const succeeded = e.Results.map((output, i) => ({
        Input: JSON.stringify(e.Items[i]),
        Output: JSON.stringify(output),
        Status: 'SUCCEEDED',
      }));
      const body = JSON.stringify(succeeded);
      await s3.send(new PutObjectCommand({ Bucket: e.Bucket, Key: `${dir}/SUCCEEDED_0.json`, Body: body }));
      const manifest = {
        DestinationBucket: e.Bucket,
        ResultFiles: { SUCCEEDED: [{ Key: `${dir}/SUCCEEDED_0.json`, Size: Buffer.byteLength(body) }] },
      };
      await s3.send(
        new PutObjectCommand({
          Bucket: e.Bucket,
          Key: `${dir}/manifest.json`,
          Body: JSON.stringify(manifest),
        }),
      );
      return withoutShim(e.Input);
    },
  };
}

type Handler = (event: unknown) => Promise<unknown>;

/** Executes the deployed definition with its task states bound by name and the Maps' S3 I/O on `s3`. */
export function runDeployed(
  deployed: Asl,
  input: Asl,
  tasks: Record<string, Handler>,
  s3: S3Client,
  retryPauseMs = 1,
): Promise<unknown> {
  const { definition, maps } = inlineDistributedMaps(deployed);
  const io = s3MapIo(s3);
  const bound: Record<string, Handler> = { ...tasks };
  for (const m of maps) {
    bound[readerState(m)] = (e) => io.readItems(e as Parameters<typeof io.readItems>[0]);
    bound[writerState(m)] = (e) => io.writeResults(e as Parameters<typeof io.writeResults>[0]);
  }
  const machine = new StateMachine(definition as never, {
    validationOptions: { checkArn: true, checkPaths: true },
  });
  const pauses = Object.fromEntries(Object.keys(tasks).map((s) => [s, retryPauseMs]));
  return machine.run(input as never, {
    overrides: { taskResourceLocalHandlers: bound as never, retryIntervalOverrides: pauses },
  }).result;
}
