import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestedEvidence } from '../../lib/runs/manifested-evidence.ts';
import { sampleEvidenceKey } from '../../lib/store/keys.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { sealManifest, verifyRun } from '../../lib/store/manifest-store.ts';

let dir: string;
let store: LocalEvidenceStore;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bfn-manifested-'));
  store = new LocalEvidenceStore(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('manifestedEvidence: the EvidenceStore a sample writes through', () => {
  it('chains every put into the sample part, reads through, and seals to a head that verifies', async () => {
    const sample = manifestedEvidence(store, 't', 'r1', 's1');
    const shot = sampleEvidenceKey('t', 'r1', 's1', '01_page.jpg');
    const log = sampleEvidenceKey('t', 'r1', 's1', 'action_log.json');
    // Written together, as an agent may: the part still gets both, in order, with nothing lost.
    const [a, b] = await Promise.all([sample.put(shot, 'jpeg bytes'), sample.put(log, '[]')]);
    expect(Buffer.from((await sample.get(shot))!).toString()).toBe('jpeg bytes');
    expect(await sample.list('t/run_r1/samples/')).toEqual([log, shot].sort());
    const sealed = await sealManifest(store, 't', 'r1');
    expect(sealed.entries).toBe(2);
    expect(await verifyRun(store, 't', 'r1', sealed.head)).toMatchObject({ ok: true, files: 2 });
    expect([a.sha256, b.sha256].every((h) => /^[0-9a-f]{64}$/.test(h))).toBe(true);
  });

  it('seals a run a killed write left a temp file in: the unfinished write is swept, a stray file is still reported', async () => {
    const sample = manifestedEvidence(store, 't', 'r-killed', 's1');
    const shot = sampleEvidenceKey('t', 'r-killed', 's1', '01_page.jpg');
    await sample.put(shot, 'jpeg bytes');
    // What a SIGKILL between write and rename leaves: the temp file of a write that never finished.
    const samples = join(dir, 't', 'run_r-killed', 'samples', 's1');
    await writeFile(join(samples, '01_page.jpg.1b4e28ba-2fa1-11d2-883f-0016d3cca427.tmp'), 'half a jpe');
    const sealed = await sealManifest(store, 't', 'r-killed');
    expect(await verifyRun(store, 't', 'r-killed', sealed.head)).toMatchObject({ ok: true, files: 1 });
    expect(await readdir(samples)).toEqual(['01_page.jpg']);
    // Anything else the manifest does not know is still someone's doing, and verify says so.
    await writeFile(join(samples, 'planted.tmp'), 'x');
    const again = await verifyRun(store, 't', 'r-killed', sealed.head);
    expect(again.ok).toBe(false);
    expect(again.problem?.message).toContain('planted.tmp is not in the manifest');
  });

  it("refuses keys outside the run, the manifest's own files, and deleting the run's evidence", async () => {
    const sample = manifestedEvidence(store, 't', 'r2', 's1');
    await expect(sample.put('t/run_other/samples/s1/x.json', '{}')).rejects.toThrow(
      /t\/run_other\/samples\/s1\/x\.json is not a file of run r2/,
    );
    await expect(sample.put('t/run_r2/manifest.jsonl', '')).rejects.toThrow(/is not a file of run r2/);
    const key = sampleEvidenceKey('t', 'r2', 's1', 'a.json');
    await sample.put(key, '{}');
    await expect(sample.delete(key)).rejects.toThrow(/cannot be deleted/);
    expect(await store.get(key)).toBeDefined();
    // Files of the tenant outside any run (profiles, specs) stay the caller's to manage.
    await store.put('t/profiles/p.json', '{}');
    await sample.delete('t/profiles/p.json');
    expect(await store.get('t/profiles/p.json')).toBeUndefined();
  });
});
