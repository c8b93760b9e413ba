import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  appendEntry,
  buildChain,
  chainHead,
  chainProblem,
  entryHash,
  formatManifest,
  GENESIS,
  type ManifestEntry,
  type ManifestFile,
  parseManifest,
  verifyChain,
} from '../../lib/store/manifest.ts';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const file = (key: string, body = `bytes of ${key}`): ManifestFile => ({
  key,
  sha256: sha(body),
  bytes: body.length,
});
const files = [
  't/run_r/samples/s1/01.png',
  't/run_r/samples/s1/result.json',
  't/run_r/samples/s2/01.png',
  't/run_r/combined.csv',
].map((k) => file(k));
/** Every file as it is on disk now: key → fresh hash. */
const onDisk = (list: ManifestFile[]) => new Map(list.map((f) => [f.key, f.sha256]));

describe('manifest hash chain', () => {
  it('links each entry to the hash of the one before', () => {
    const chain = buildChain(files);
    expect(chain[0]?.prev).toBe(GENESIS);
    for (let i = 1; i < chain.length; i++) expect(chain[i]?.prev).toBe(chain[i - 1]?.hash);
    expect(chain.map((e) => e.index)).toEqual([0, 1, 2, 3]);
    expect(chain[2]?.hash).toBe(entryHash(chain[1]?.hash as string, files[2] as ManifestFile, 2));
    expect(chainHead(chain)).toBe(chain[3]?.hash);
    expect(chainHead([])).toBe(GENESIS);
    // Same files in another order: another head.
    expect(chainHead(buildChain([...files].reverse()))).not.toBe(chainHead(chain));
    expect(appendEntry(chain.slice(0, 2), files[2] as ManifestFile)).toEqual(chain[2]);
  });

  it('refuses entries that could not be verified later', () => {
    expect(() => appendEntry([], { key: '', sha256: sha('x'), bytes: 1 })).toThrow(/key/);
    expect(() => appendEntry([], { key: 'k', sha256: 'abc', bytes: 1 })).toThrow(/sha256/);
    expect(() => appendEntry([], { key: 'k', sha256: sha('x'), bytes: -1 })).toThrow(/bytes/);
  });

  it('verifies an untouched run against its stored head', () => {
    const chain = buildChain(files);
    expect(verifyChain(chain, onDisk(files), chainHead(chain))).toEqual({
      ok: true,
      entries: 4,
      head: chainHead(chain),
    });
  });

  it('names an edited file by its entry', () => {
    const chain = buildChain(files);
    const now = onDisk(files);
    now.set('t/run_r/samples/s2/01.png', sha('another picture'));
    expect(verifyChain(chain, now, chainHead(chain)).problem).toMatchObject({
      kind: 'edited',
      where: 'file',
      index: 2,
      key: 't/run_r/samples/s2/01.png',
    });
  });

  it('names the first problem when several files changed', () => {
    const chain = buildChain(files);
    const now = onDisk(files);
    now.delete('t/run_r/combined.csv');
    now.set('t/run_r/samples/s1/result.json', sha('{"price":0}'));
    expect(verifyChain(chain, now).problem).toMatchObject({ kind: 'edited', index: 1 });
  });

  it('names a removed file', () => {
    const chain = buildChain(files);
    const now = onDisk(files);
    now.delete('t/run_r/samples/s1/01.png');
    expect(verifyChain(chain, now).problem).toMatchObject({ kind: 'removed', where: 'file', index: 0 });
  });

  it('names reordered entries', () => {
    const chain = buildChain(files);
    const swapped = [chain[0], chain[2], chain[1], chain[3]] as ManifestEntry[];
    expect(verifyChain(swapped, onDisk(files)).problem).toMatchObject({
      kind: 'reordered',
      where: 'manifest',
      index: 1,
      key: 't/run_r/samples/s2/01.png',
    });
  });

  it('names entries taken out of the manifest', () => {
    const chain = buildChain(files);
    const gap = [chain[0], chain[2], chain[3]] as ManifestEntry[];
    expect(verifyChain(gap, onDisk(files)).problem).toMatchObject({
      kind: 'removed',
      where: 'manifest',
      index: 1,
    });
  });

  it('names an entry changed to match an edited file', () => {
    const chain = buildChain(files);
    const forged = chain.map((e) => (e.index === 1 ? { ...e, sha256: sha('{"price":0}') } : e));
    const now = onDisk(files);
    now.set(files[1]?.key as string, sha('{"price":0}'));
    expect(verifyChain(forged, now).problem).toMatchObject({ kind: 'edited', where: 'manifest', index: 1 });
  });

  it('catches a truncated or wholly rewritten manifest through the stored head', () => {
    const chain = buildChain(files);
    const head = chainHead(chain);
    // Last file and its entry both gone: the chain itself is consistent, the head is not.
    const truncated = chain.slice(0, 3);
    expect(verifyChain(truncated, onDisk(files.slice(0, 3)), head).problem).toMatchObject({ kind: 'head' });
    // Reordered and re-chained from scratch: every link holds, the head does not.
    const rewritten = buildChain([files[1], files[0], files[2], files[3]] as ManifestFile[]);
    expect(verifyChain(rewritten, onDisk(files)).ok).toBe(true);
    expect(verifyChain(rewritten, onDisk(files), head).problem).toMatchObject({ kind: 'head' });
  });

  it('names a file that no entry names', () => {
    const chain = buildChain(files);
    const now = onDisk(files);
    now.set('t/run_r/samples/s2/99_planted.png', sha('planted'));
    now.set('t/run_r/samples/s1/98_planted.png', sha('planted'));
    const report = verifyChain(chain, now, chainHead(chain));
    expect(report.problem).toMatchObject({ kind: 'added', key: 't/run_r/samples/s1/98_planted.png' });
    // One entry per problem: each planted file named on its own.
    expect(report.problems?.map((p) => p.key)).toEqual([
      't/run_r/samples/s1/98_planted.png',
      't/run_r/samples/s2/99_planted.png',
    ]);
  });

  it('checks a rewritten key against its last entry', () => {
    const first = file('t/run_r/samples/s1/result.json', 'partial');
    const second = file('t/run_r/samples/s1/result.json', 'final');
    const chain = buildChain([first, second]);
    expect(verifyChain(chain, onDisk([second])).ok).toBe(true);
    expect(verifyChain(chain, onDisk([first])).problem).toMatchObject({ kind: 'edited', index: 1 });
  });

  it('round-trips through JSON lines and names a bad line', () => {
    const chain = buildChain(files);
    const text = formatManifest(chain);
    expect(text.split('\n')).toHaveLength(5);
    expect(parseManifest(text)).toEqual(chain);
    expect(chainProblem(parseManifest(text))).toBeUndefined();
    expect(() => parseManifest(`${text}{"key":"x"}\n`, 'manifest.jsonl')).toThrow(/manifest.jsonl line 5/);
    expect(() => parseManifest('not json\n')).toThrow(/line 1 is not JSON/);
  });
});
