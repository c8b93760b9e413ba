/**
 * The run report: one self-contained HTML file (no external requests; screenshots inlined as data
 * URIs) with the totals, a row per sample (status, reason, data, tokens, cost), each sample's screenshot
 * timeline with SHA-256 hashes and its action log, and a status filter.
 */
import { createHash } from 'node:crypto';
import { keySegment } from '../store/keys.ts';
import type { EvidenceStore, Json, ResultRecord, RunRecord, RunStore, SampleRecord } from '../store/ports.ts';
import { storedVerdict } from './judge-run.ts';
import { totalsOf } from './merge.ts';
import { fieldCell, renderSummary, SUMMARY_CSS, summarizeRun, workflowLabel } from './report-summary.ts';
import { checkResults, resultSeals } from './result-seals.ts';

export interface ReportSample {
  sample: SampleRecord;
  result?: ResultRecord;
  shots: { key: string; sha256: string; dataUri?: string }[];
  actions: Json;
  /** The judge's verdict, when it ruled on the sample. */
  verdict?: { verdict: string; reasoning: string };
  /** Why the stored result is not what the merge sealed (result-seals.ts): the row is flagged. */
  tampered?: string;
}

const esc = (s: string) =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
const fileOf = (key: string) => key.slice(key.lastIndexOf('/') + 1);

const CSS = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2330}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #dde;padding:6px 8px;text-align:left;vertical-align:top}
.totals span{display:inline-block;margin-right:18px}.status{font-weight:600}
tr[data-status=done] .status{color:#16723a}tr[data-status=failed] .status{color:#b3261e}
tr[data-status=needs_review] .status,tr[data-status=partial_success] .status{color:#9a6700}
pre{white-space:pre-wrap;margin:0;max-width:520px;font-size:12px}figure{display:inline-block;margin:4px}
figure img{max-width:240px;border:1px solid #ccd}figcaption{font:11px monospace;word-break:break-all;max-width:240px}
details{margin-top:4px}.tampered{display:block;color:#fff;background:#b3261e;padding:2px 6px;margin-top:4px}
${SUMMARY_CSS}`;

const FILTER = `const sel=document.getElementById('filter');
function apply(){const v=sel.value;let n=0;for(const r of document.querySelectorAll('tr.sample')){const on=!v||r.dataset.status===v;r.hidden=!on;if(on)n++}document.getElementById('shown').textContent=String(n)}
sel.addEventListener('change',apply);apply();`;

const sha256Source = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * The report's Content-Security-Policy: only its own style block and filter script (by hash, no
 * `unsafe-inline`), inlined screenshots, nothing fetched. Served as a header by the API and repeated
 * in a meta tag for the copy opened from disk. Page-derived text that slipped past escaping still
 * could not run.
 */
export const REPORT_CSP = [
  "default-src 'none'",
  `script-src ${sha256Source(FILTER)}`,
  `style-src ${sha256Source(CSS)}`,
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The report's HTML (pure). */
export function renderReport(run: RunRecord, samples: ReportSample[]): string {
  const totals = totalsOf(
    run,
    samples.map((s) => s.sample),
    samples.flatMap((s) => (s.result ? [s.result] : [])),
  );
  const counts = Object.entries(totals.counts).filter(([, n]) => n > 0);
  const unpriced = samples.some(
    ({ result: r }) =>
      r !== undefined &&
      r.usage.costUsd === undefined &&
      Number(r.usage.promptTokens ?? 0) + Number(r.usage.completionTokens ?? 0) > 0,
  );
  // What a person scans first (goal, chart, failures by reason, tokens by mode, heals), and the
  // output fields as columns instead of one JSON blob per row.
  const summary = summarizeRun(run, samples);
  const fields = summary.fields.length > 0 ? summary.fields : ['data'];
  const rows = samples
    .map(({ sample, result, shots, actions, verdict, tampered }) => {
      const status = result?.status ?? sample.status;
      const tokens = Number(result?.usage.promptTokens ?? 0) + Number(result?.usage.completionTokens ?? 0);
      // Tokens spent at no known price make the cost unknown: "$0" would claim it was free.
      const cost =
        tokens > 0 && result?.usage.costUsd === undefined
          ? 'unknown'
          : Number(result?.usage.costUsd ?? 0).toFixed(6);
      const timeline = shots
        .map(
          (s, i) =>
            `<figure data-sha256="${esc(s.sha256)}">${s.dataUri ? `<img alt="${esc(fileOf(s.key))}" src="${s.dataUri}">` : '<em>missing</em>'}` +
            `<figcaption>${i + 1}. ${esc(fileOf(s.key))}<br>sha256 ${esc(s.sha256)}</figcaption></figure>`,
        )
        .join('');
      const data = result?.data ?? null;
      const record = data && typeof data === 'object' && !Array.isArray(data) ? data : undefined;
      const cells = fields.map((f) => fieldCell(f, summary.fields.length > 0 ? record?.[f] : data)).join('');
      // The sample's last screenshot, where the run left the page, shown in its row.
      const last = [...shots].reverse().find((s) => s.dataUri);
      const finalShot = last
        ? `<img alt="final screenshot ${esc(fileOf(last.key))}" src="${last.dataUri}">`
        : '—';
      return (
        `<tr class="sample" data-status="${esc(status)}" data-sample="${esc(sample.sampleId)}"${tampered ? ' data-tampered="true"' : ''}>` +
        `<td>${esc(sample.sampleId)}<br><a href="${esc(sample.url)}">${esc(sample.url)}</a>${summary.workflows.has(sample.sampleId) ? `<br>${workflowLabel(summary.workflows.get(sample.sampleId))}` : ''}</td>` +
        `<td class="status">${esc(status)}${verdict ? `<br><span class="verdict" data-verdict="${esc(verdict.verdict)}" title="${esc(verdict.reasoning)}">judge: ${esc(verdict.verdict)}</span>` : ''}${tampered ? `<strong class="tampered">TAMPERED: ${esc(tampered)}</strong>` : ''}</td><td class="reason">${esc(result?.reason ?? sample.reason ?? '')}</td>` +
        `${cells}<td class="shot">${finalShot}</td>` +
        `<td class="tokens">${tokens}</td><td class="cost">${cost}</td>` +
        `<td>${timeline || '—'}<details><summary>data as JSON</summary><pre class="data">${esc(JSON.stringify(data, null, 2))}</pre></details><details><summary>action log</summary><pre class="actions">${esc(JSON.stringify(actions, null, 2))}</pre></details></td></tr>`
      );
    })
    .join('\n');
  const options = ['', ...Object.keys(totals.counts)]
    .map((s) => `<option value="${esc(s)}">${esc(s || 'all statuses')}</option>`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>browserfn run ${esc(run.runId)}</title>
<meta http-equiv="Content-Security-Policy" content="${esc(REPORT_CSP.replace(/; frame-ancestors[^;]*/, ''))}">
<style>${CSS}</style></head><body>
<h1>Run ${esc(run.runId)}</h1>
${renderSummary(summary)}
<p class="totals"><span>status <b id="run-status">${esc(run.status)}</b></span><span>samples <b id="total-samples">${totals.samples}</b></span>
${counts.map(([k, n]) => `<span>${esc(k)} <b class="count" data-status="${esc(k)}">${n}</b></span>`).join('')}
<span>tokens <b id="total-tokens">${totals.promptTokens + totals.completionTokens}</b></span><span>cost <b id="total-cost">${unpriced ? 'unknown' : `$${totals.costUsd.toFixed(4)}`}</b></span>
<span>duration <b>${(totals.durationMs / 1000).toFixed(1)} s</b></span>${run.manifestHead ? `<span>manifest head <code id="manifest-head">${esc(run.manifestHead)}</code></span>` : ''}</p>
<p><label>Show <select id="filter">${options}</select></label> — <span id="shown"></span> shown</p>
<table><thead><tr><th>sample</th><th>status</th><th>reason</th>${fields.map((f) => `<th class="field">${esc(f)}</th>`).join('')}<th>final screenshot</th><th>tokens</th><th>cost $</th><th>evidence</th></tr></thead>
<tbody>
${rows}
</tbody></table>
<script>${FILTER}</script></body></html>`;
}

/** Reads everything the report shows and returns its HTML. */
export async function buildReport(
  runStore: RunStore,
  evidence: EvidenceStore,
  tenant: string,
  runId: string,
): Promise<string | undefined> {
  const run = await runStore.getRun(tenant, runId);
  if (!run) return undefined;
  const [samples, results] = await Promise.all([
    runStore.listSamples(tenant, runId),
    runStore.listResults(tenant, runId),
  ]);
  const byId = new Map(
    checkResults(results, await resultSeals(evidence, run), run).map((r) => [r.sampleId, r]),
  );
  const out: ReportSample[] = [];
  for (const sample of samples) {
    const result = byId.get(sample.sampleId);
    const files = result?.evidence ?? [];
    const shots = await Promise.all(
      files
        .filter((e) => /\.(png|jpe?g)$/i.test(e.key))
        .map(async (e) => {
          const body = await evidence.get(e.key);
          const type = /\.png$/i.test(e.key) ? 'image/png' : 'image/jpeg';
          return {
            ...e,
            ...(body ? { dataUri: `data:${type};base64,${Buffer.from(body).toString('base64')}` } : {}),
          };
        }),
    );
    const logKey = files.find((e) => e.key.endsWith('action_log.json'))?.key;
    const log = logKey ? await evidence.get(logKey) : undefined;
    let actions: Json = [];
    if (log) {
      try {
        actions = JSON.parse(Buffer.from(log).toString('utf8')) as Json;
      } catch {
        actions = Buffer.from(log).toString('utf8');
      }
    }
    const verdict = result ? await storedVerdict(evidence, tenant, runId, sample.sampleId) : undefined;
    out.push({
      sample,
      ...(result ? { result } : {}),
      shots,
      actions,
      ...(verdict ? { verdict: { verdict: verdict.verdict, reasoning: verdict.reasoning } } : {}),
      ...(result?.tamperReason ? { tampered: result.tamperReason } : {}),
    });
  }
  return renderReport(run, out);
}

/**
 * Where a run's report is kept: beside the run's files, not among them. The report is a view written
 * after the manifest was sealed; inside `run_<id>/` it would read as an added file at `verify`.
 */
export function reportKey(tenant: string, runId: string): string {
  return `${keySegment(tenant)}/reports/run_${keySegment(runId)}/report.html`;
}

/** Builds the report and stores it in the evidence store; returns its key. */
export async function writeReport(
  runStore: RunStore,
  evidence: EvidenceStore,
  tenant: string,
  runId: string,
): Promise<string | undefined> {
  const html = await buildReport(runStore, evidence, tenant, runId);
  if (html === undefined) return undefined;
  const key = reportKey(tenant, runId);
  await evidence.put(key, html, 'text/html');
  return key;
}
