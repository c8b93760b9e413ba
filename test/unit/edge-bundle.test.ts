/**
 * Issue 26 item 2: nothing reachable from the edge entry imports a Node built-in or a Node-only
 * package. The entry is bundled as a Workers build bundles it (esbuild, platform neutral, the
 * workerd conditions); a failure prints each import with the chain of files that reaches it.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleEdge, describeNodeImports, ROOT } from '../../infra/edge/bundle.ts';

describe('edge bundle', () => {
  it('reaches no Node built-in and no Node-only package from functions/edge.ts, and stays under 1 MB compressed', async () => {
    const bundle = await bundleEdge();
    expect(describeNodeImports(bundle.nodeImports), 'Node imports reachable from functions/edge.ts').toBe('');
    // The target, without the model SDKs (the openai SDK is in the bundle).
    expect(bundle.gzipBytesWithoutSdks).toBeLessThan(1024 * 1024);
  });

  it('names the chain of files that reaches a Node import (the check itself)', async () => {
    const bundle = await bundleEdge(join(ROOT, 'test/fixtures/edge/node-entry.ts'));
    expect(bundle.nodeImports).toEqual([
      {
        module: 'node:crypto',
        chain: ['test/fixtures/edge/node-entry.ts', 'test/fixtures/edge/node-helper.ts'],
      },
    ]);
  });
});
