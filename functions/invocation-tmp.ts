/**
 * Lambda hygiene: a warm container keeps its /tmp (512 MB by default) between invocations, so files an
 * invocation leaves behind (downloads, screenshots, browser profiles) would pile up until it fails.
 * Each invocation gets its own folder as the temp dir (`os.tmpdir()` reads TMPDIR on every call), and
 * the folder goes when the invocation ends, whatever happened in it.
 *
 * What must outlive an invocation (the warm browser's binary and profile) is set up first by `warm`,
 * while TMPDIR still points at the container's own /tmp.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function withInvocationTmp<T>(
  fn: () => Promise<T>,
  options: { warm?: () => Promise<unknown> } = {},
): Promise<T> {
  await options.warm?.();
  const base = tmpdir();
  const previous = process.env.TMPDIR;
  const dir = await mkdtemp(join(base, 'bfn-inv-'));
  process.env.TMPDIR = dir;
  try {
    return await fn();
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    await rm(dir, { recursive: true, force: true });
  }
}
