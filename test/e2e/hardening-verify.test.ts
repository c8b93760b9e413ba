import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCommand } from '../../lib/cli/run-tools.ts';
import type { Json } from '../../lib/store/ports.ts';
import { type HardeningEnv, startHardeningEnv, TENANT } from '../support/hardening-env.ts';

/**
 * Issue 21 item 5: `browserfn verify` covers everything the evidence store holds (links, temporary
 * files, dot folders), the stored results, and a head kept outside both stores; the served evidence
 * route never follows a link. Tampering is done on the files, as an attacker with disk access would.
 */

let env: HardeningEnv;

beforeAll(async () => {
  env = await startHardeningEnv();
});

afterAll(async () => {
  await env?.close();
});

/** The verdict of `browserfn verify` on the planted run: one line, or one line per problem. */
async function verifyLine(runId: string, ...extra: string[]): Promise<{ code: number; line: string }> {
  const lines: string[] = [];
  const code = await verifyCommand([runId, '--out', env.root, ...extra], (l) => lines.push(l));
  return { code, line: lines.join('\n') };
}

describe('verify covers everything the evidence store holds (item 5)', () => {
  it('passes an untouched run, with its head', async () => {
    await env.plantRun('r-clean');
    const { code, line } = await verifyLine('r-clean');
    expect(line).toMatch(/^ok: \d+ evidence files match the manifest .*and the stored results match/);
    expect(code).toBe(0);
  });

  it('reports an added symlink, and the evidence route does not follow it', async () => {
    await env.plantRun('r-link');
    const dir = join(env.root, 'evidence', TENANT, 'run_r-link', 'samples', 's1');
    await symlink('/etc/hostname', join(dir, 'host.txt'));
    await symlink('/etc', join(dir, 'etcdir'));
    const { code, line } = await verifyLine('r-link');
    expect(code).toBe(1);
    expect(line).toMatch(/^TAMPERED: .*(host\.txt|etcdir).*not a regular file/);
    for (const path of ['samples/s1/host.txt', 'samples/s1/etcdir/hostname']) {
      const res = await env.get(`/v1/runs/r-link/evidence/${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toContain((await readFile('/etc/hostname', 'utf8')).trim() || '\u0000');
    }
  });

  it('reports an added .tmp file and a file in a dot folder', async () => {
    await env.plantRun('r-tmp');
    await writeFile(
      join(env.root, 'evidence', TENANT, 'run_r-tmp', 'samples', 's1', 'extra.png.123.tmp'),
      'x',
    );
    await writeFile(join(env.root, 'evidence', TENANT, 'run_r-tmp', 'samples', 's1', 'second.json'), '{}');
    let v = await verifyLine('r-tmp');
    expect(v.code).toBe(1);
    // One line per problem, each naming its file: not the first one and a count of the rest.
    const lines = v.line.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^TAMPERED: .*extra\.png\.123\.tmp.*file added/);
    expect(lines[1]).toMatch(/^TAMPERED: .*second\.json.*file added/);
    await env.plantRun('r-dot');
    await mkdir(join(env.root, 'evidence', TENANT, 'run_r-dot', '.hidden'));
    await writeFile(join(env.root, 'evidence', TENANT, 'run_r-dot', '.hidden', 'payload.html'), 'x');
    v = await verifyLine('r-dot');
    expect(v.code).toBe(1);
    expect(v.line).toMatch(/^TAMPERED: .*\.hidden\/payload\.html.*file added/);
  });

  it('reports a stored result edited after the merge', async () => {
    await env.plantRun('r-edit');
    // An attacker with write access to the run store changes what /results and the report show.
    const file = await findFile(
      join(env.root, '.browserfn', 'runs'),
      (p, text) => p.includes('r-edit') && text.includes('"sampleId": "s1"') && text.includes('"data"'),
    );
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace('"plain": "ok"', '"plain": "changed"'));
    // /results still shows what is stored, but marks the edited row; the untouched one is not marked.
    const shown = (await (await env.get('/v1/runs/r-edit/results')).json()) as Served;
    expect(JSON.stringify(shown.results)).toContain('changed');
    expect(shown.tampered).toBe(1);
    const [s1, s2] = shown.results;
    expect(s1).toMatchObject({ sampleId: 's1', tampered: true });
    expect(s1?.tamperReason).toMatch(/differs from the result the run's merge sealed.*edited after it/);
    expect(s2?.sampleId).toBe('s2');
    expect(s2?.tampered).toBeUndefined();
    // So does the report: a visible flag on that row only.
    const report = await (await env.get('/v1/runs/r-edit/report')).text();
    expect(rowOf(report, 's1')).toMatch(/data-tampered="true".*TAMPERED: differs from the result/s);
    expect(rowOf(report, 's2')).not.toMatch(/tampered/i);
    const { code, line } = await verifyLine('r-edit');
    expect(code).toBe(1);
    expect(line).toMatch(/^TAMPERED: .*stored result edited.*sample s1/);
    // An untouched run's results carry no mark.
    await env.plantRun('r-untouched');
    const clean = (await (await env.get('/v1/runs/r-untouched/results')).json()) as Served;
    expect(clean.tampered).toBeUndefined();
    expect(clean.results.filter((r) => r.tampered)).toEqual([]);
  });

  it('marks every result when the sealed copy itself was edited to match', async () => {
    await env.plantRun('r-both');
    const runs = join(env.root, '.browserfn', 'runs');
    const stored = await findFile(runs, (p, t) => p.includes('r-both') && t.includes('"plain": "ok"'));
    await writeFile(stored, (await readFile(stored, 'utf8')).replace('"plain": "ok"', '"plain": "changed"'));
    const sealed = join(env.root, 'evidence', TENANT, 'run_r-both', 'results.json');
    await writeFile(sealed, (await readFile(sealed, 'utf8')).replace('"plain": "ok"', '"plain": "changed"'));
    const shown = (await (await env.get('/v1/runs/r-both/results')).json()) as Served;
    expect(shown.tampered).toBe(2);
    for (const r of shown.results)
      expect(r.tamperReason).toMatch(
        /sealed results cannot be trusted: .*results\.json differs from its hash/,
      );
    const report = await (await env.get('/v1/runs/r-both/report')).text();
    expect(report.match(/data-tampered="true"/g)).toHaveLength(2);
  });

  it('checks against a head the caller kept outside both stores', async () => {
    await env.plantRun('r-head');
    const kept = (await env.runStore.getRun(TENANT, 'r-head'))!.manifestHead!;
    expect((await verifyLine('r-head', '--head', kept)).code).toBe(0);
    const other = (await verifyLine('r-head', '--head', 'f'.repeat(64))).line;
    expect(other).toMatch(/^TAMPERED: .*chain head differs/);
  });
});

type Served = {
  tampered?: number;
  results: { sampleId: string; data: Json; tampered?: boolean; tamperReason?: string }[];
};

/** The report's table row of one sample. */
function rowOf(html: string, sampleId: string): string {
  const start = html.indexOf(`data-sample="${sampleId}"`);
  expect(start).toBeGreaterThan(0);
  return html.slice(start, html.indexOf('</tr>', start));
}

/** The first file under `dir` whose path and text satisfy `match`. */
async function findFile(dir: string, match: (path: string, text: string) => boolean): Promise<string> {
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    if (match(p, await readFile(p, 'utf8'))) return p;
  }
  throw new Error(`no matching file under ${dir}`);
}
