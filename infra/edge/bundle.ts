/**
 * Bundles the edge worker (functions/edge.ts) the way a Workers build does: esbuild, `platform:
 * "neutral"`, the `workerd, worker, browser` conditions. Every import of a Node built-in (`node:*`
 * or a bare `fs`, `http`…) or of a package that only runs on Node is recorded with the chain of
 * files that reaches it, instead of being bundled: the test fails on any, the benchmark prints the
 * size. Runs on Node (the build machine), never inside the worker.
 */
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type Metafile, type Plugin } from 'esbuild';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const EDGE_ENTRY = join(ROOT, 'functions', 'edge.ts');

/** Packages that need Node (sockets, child processes, the file system, a native binary). */
export const NODE_ONLY_PACKAGES = [
  'playwright-core',
  'playwright',
  '@sparticuz/chromium',
  'undici',
  'ws',
  'pngjs',
  '@hono/node-server',
  'aws-local-stepfunctions',
  'csv-parse',
  'csv-stringify',
  'cli-progress',
  'p-limit',
  '@aws-sdk/client-dynamodb',
  '@aws-sdk/client-s3',
  '@aws-sdk/client-sfn',
  '@aws-sdk/client-sqs',
  '@aws-sdk/lib-dynamodb',
  '@aws-sdk/s3-request-presigner',
  '@google/genai',
];

/** The model SDKs: allowed on the edge path, but left out of the size the target is about. */
export const MODEL_SDKS = ['openai', '@anthropic-ai/sdk'];

export interface NodeImport {
  /** What was imported (`node:crypto`, `undici`). */
  module: string;
  /** From the entry to the file that imports it, repository-relative. */
  chain: string[];
}

export interface EdgeBundle {
  code: string;
  bytes: number;
  gzipBytes: number;
  /** The bundle's bytes that come from the model SDKs (before compression). */
  sdkBytes: number;
  /** The bundle compressed, without the model SDKs' share (estimated by their share of the raw bytes). */
  gzipBytesWithoutSdks: number;
  nodeImports: NodeImport[];
  metafile: Metafile;
}

const BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
const packageOf = (spec: string) =>
  spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] ?? spec);

/** The shortest chain of imports from the entry to `target`, by the bundle's own import graph. */
function chainTo(metafile: Metafile, entry: string, target: string): string[] {
  const previous = new Map<string, string | undefined>([[entry, undefined]]);
  const queue = [entry];
  while (queue.length > 0) {
    const at = queue.shift() as string;
    if (at === target) break;
    for (const imp of metafile.inputs[at]?.imports ?? []) {
      if (previous.has(imp.path)) continue;
      previous.set(imp.path, at);
      queue.push(imp.path);
    }
  }
  if (!previous.has(target)) return [target];
  const chain: string[] = [];
  for (let at: string | undefined = target; at !== undefined; at = previous.get(at)) chain.unshift(at);
  return chain;
}

/** Bundles `entry` (default functions/edge.ts) for workerd and reports what still needs Node. */
export async function bundleEdge(entry = EDGE_ENTRY): Promise<EdgeBundle> {
  const found: { module: string; importer: string }[] = [];
  const refuseNode: Plugin = {
    name: 'refuse-node',
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        const spec = args.path;
        const nodeOnly = BUILTINS.has(spec) || NODE_ONLY_PACKAGES.includes(packageOf(spec));
        if (!nodeOnly) return undefined;
        found.push({ module: spec, importer: relative(ROOT, args.importer) });
        return { path: spec, external: true };
      });
    },
  };
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    minify: true,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: ROOT,
    plugins: [refuseNode],
  });
  const out = result.outputFiles[0];
  if (!out) throw new Error('esbuild wrote no output');
  const metafile = result.metafile;
  const entryKey = relative(ROOT, entry);
  const seen = new Set<string>();
  const nodeImports: NodeImport[] = [];
  for (const f of found) {
    const id = `${f.importer} ${f.module}`;
    if (seen.has(id)) continue;
    seen.add(id);
    nodeImports.push({ module: f.module, chain: chainTo(metafile, entryKey, f.importer) });
  }
  const output = Object.values(metafile.outputs)[0];
  let sdkBytes = 0;
  for (const [path, input] of Object.entries(output?.inputs ?? {}))
    if (MODEL_SDKS.some((sdk) => path.includes(`node_modules/${sdk}/`))) sdkBytes += input.bytesInOutput;
  const bytes = out.contents.byteLength;
  const gzipBytes = gzipSync(out.contents, { level: 9 }).byteLength;
  return {
    code: out.text,
    bytes,
    gzipBytes,
    sdkBytes,
    gzipBytesWithoutSdks: Math.round(gzipBytes * (1 - sdkBytes / Math.max(1, bytes))),
    nodeImports,
    metafile,
  };
}

/** One line per Node import: the module and how the entry reaches it. */
export function describeNodeImports(imports: NodeImport[]): string {
  return imports.map((i) => `${i.module}  ←  ${i.chain.join(' → ')}`).join('\n');
}
