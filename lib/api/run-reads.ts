/**
 * The runs API's reads: status, results, report and evidence of one run of the caller's tenant.
 * Reads are what a caller polls, so each does work bounded by what it answers: status from the kept
 * totals (one small file or item, however large the run), whole results checked and serialized a
 * slice at a time with turns of the event loop between, so one key's big read never holds the
 * server's one thread for long (another key's read gets in between slices).
 */
import type { Context, Hono } from 'hono';
import { combinedCsv, totalsOf } from '../runs/merge.ts';
import { totalsFromProgress } from '../runs/progress-totals.ts';
import { buildReport, REPORT_CSP } from '../runs/report.ts';
import { type CheckedResult, checkResults, resultSeals } from '../runs/result-seals.ts';
import { evidenceHeaders } from '../store/evidence-headers.ts';
import { runEvidencePrefix } from '../store/keys.ts';
import { parseEvidencePath } from '../store/names.ts';
import type { ResultRecord, RunRecord } from '../store/ports.ts';
import type { RunsApiDeps } from './runs.ts';

type Env = { Variables: { tenant: string } };

export const invalid = (c: Context<Env>, message: string, path = '(body)') =>
  c.json({ error: { kind: 'invalid', message, issues: [{ path, message }] } }, 400);
export const notFound = (c: Context<Env>, runId: string) =>
  c.json({ error: { kind: 'not_found', message: `no run "${runId}"` } }, 404);

/** How long after its last status write a running run is not yet checked against its execution. */
const LAUNCH_GRACE_MS = 15_000;
/** Results checked and serialized between two turns of the event loop (about a millisecond's work). */
export const RESULTS_PER_SLICE = 64;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The results answer as JSON text, a slice at a time: `{"runId","status","results":[…],"tampered"}`
 * (`tampered` only when some are). Each result is checked against its sealed copy as it is written:
 * an edited one is marked, never passed as good. Pure apart from the turns it yields.
 */
export async function* resultsJson(
  run: Pick<RunRecord, 'runId' | 'status'>,
  results: readonly ResultRecord[],
  check: (slice: readonly ResultRecord[]) => CheckedResult[],
  slice = RESULTS_PER_SLICE,
): AsyncGenerator<string> {
  yield `{"runId":${JSON.stringify(run.runId)},"status":${JSON.stringify(run.status)},"results":[`;
  let tampered = 0;
  for (let i = 0; i < results.length; i += slice) {
    if (i > 0) await nextTurn();
    const checked = check(results.slice(i, i + slice));
    tampered += checked.filter((r) => r.tampered).length;
    yield (i > 0 ? ',' : '') + checked.map((r) => JSON.stringify(r)).join(',');
  }
  yield tampered ? `],"tampered":${tampered}}` : ']}';
}

export function registerRunReadRoutes(app: Hono<Env>, deps: RunsApiDeps): void {
  const { runStore, evidence } = deps;
  /**
   * The run, with a run that says it is running but whose execution has ended (its last status write
   * failed, or the server restarted under it) marked failed with that reason, so it never reads as
   * running forever. A run just launched gets a grace period: its execution may not be listed yet.
   */
  const settled = async (tenant: string, runId: string) => {
    const run = await runStore.getRun(tenant, runId);
    if (!run || (run.status !== 'running' && run.status !== 'merging') || !deps.isActive) return run;
    if (Date.now() - Date.parse(run.updatedAt) < LAUNCH_GRACE_MS) return run;
    if (await deps.isActive(tenant, runId)) return run;
    const again = await runStore.getRun(tenant, runId);
    if (!again || (again.status !== 'running' && again.status !== 'merging')) return again;
    const reason =
      'the run stopped without recording how it ended (a store write failed, or the server restarted); resume it to go on';
    await runStore.updateRun(tenant, runId, { status: 'failed', reason });
    return { ...again, status: 'failed' as const, reason };
  };

  app.get('/v1/runs/:id', async (c) => {
    const tenant = c.get('tenant');
    const runId = c.req.param('id');
    const run = await settled(tenant, runId);
    if (!run) return notFound(c, runId);
    // The kept counts when the store has them: one small read, however large the run.
    const progress = await runStore.runProgress?.(tenant, runId);
    const totals = progress
      ? totalsFromProgress(run, progress)
      : await Promise.all([runStore.listSamples(tenant, runId), runStore.listResults(tenant, runId)]).then(
          ([samples, results]) => totalsOf(run, samples, results),
        );
    return c.json({
      runId,
      status: run.status,
      createdAt: run.createdAt,
      updatedAt: run.updatedAt,
      ...(run.reason ? { reason: run.reason } : {}),
      ...(run.manifestHead ? { manifestHead: run.manifestHead } : {}),
      totals,
    });
  });

  app.get('/v1/runs/:id/results', async (c) => {
    const tenant = c.get('tenant');
    const runId = c.req.param('id');
    const format = c.req.query('format') ?? 'json';
    if (format !== 'json' && format !== 'csv') return invalid(c, 'format: csv or json', 'format');
    // Cells that a spreadsheet would run as formulas are escaped unless the caller asks for raw values.
    const rawArg = c.req.query('raw') ?? 'false';
    if (rawArg !== 'true' && rawArg !== 'false') return invalid(c, 'raw: true or false', 'raw');
    const raw = rawArg === 'true';
    const run = await runStore.getRun(tenant, runId);
    if (!run) return notFound(c, runId);
    // The JSON answer is the results alone: the samples (every one of a big run) only for the CSV rows.
    const results = await runStore.listResults(tenant, runId);
    if (format === 'csv')
      return c.body(combinedCsv(await runStore.listSamples(tenant, runId), results, { raw }), 200, {
        'content-type': 'text/csv; charset=utf-8',
      });
    const seals = await resultSeals(evidence, run);
    // Built here, not streamed: the read's whole work stays inside the handler, where the key's fair
    // share of the server measures it (lib/api/fair-share.ts).
    const parts: string[] = [];
    for await (const part of resultsJson(run, results, (slice) => checkResults(slice, seals, run)))
      parts.push(part);
    return c.body(parts.join(''), 200, { 'content-type': 'application/json' });
  });

  app.get('/v1/runs/:id/report', async (c) => {
    const runId = c.req.param('id');
    const html = await buildReport(runStore, evidence, c.get('tenant'), runId);
    if (html === undefined) return notFound(c, runId);
    return c.body(html, 200, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': REPORT_CSP,
      'x-content-type-options': 'nosniff',
    });
  });

  app.get('/v1/runs/:id/evidence/*', async (c) => {
    const tenant = c.get('tenant');
    const runId = c.req.param('id');
    if (!(await runStore.getRun(tenant, runId))) return notFound(c, runId);
    // The path as sent (hono's c.req.path is already partly decoded): decoded once, here, by the rule.
    const sent = /\/runs\/[^/]+\/evidence\/(.*)$/.exec(new URL(c.req.url).pathname)?.[1] ?? '';
    const path = parseEvidencePath(sent);
    if ('problem' in path) return invalid(c, path.problem, 'path');
    const { parts } = path;
    const key = runEvidencePrefix(tenant, runId) + parts.join('/');
    const url = await evidence.link?.(key, 300);
    if (url) return c.redirect(url, 302);
    const body = await evidence.get(key);
    if (!body)
      return c.json({ error: { kind: 'not_found', message: `no evidence "${parts.join('/')}"` } }, 404);
    return c.body(Buffer.from(body), 200, evidenceHeaders(key));
  });
}
