/**
 * What a person scans first in a run report (issue 23 item 9, issue 28 item 6): the goal and spec,
 * counts by status as a bar chart, failures grouped by their reason, tokens and cost by what paid for
 * them (agent / extract / cua / scenario / workflow / heal / fallback), the heals, which workflow version each sample
 * ran — and, for the sample table, one column per output field with readable cells. Pure: it reads
 * run and result records (the per-sample usage contract of workflow runs: `mode`, `workflow`,
 * `heals`, `paid`, `fallback`) and returns data or HTML; report.ts does the reading and the page.
 */
import type { Json, JsonObject, ResultRecord, RunRecord, SampleRecord } from '../store/ports.ts';
import { describeCandidate, escapeHtml as esc } from '../workflows/show.ts';
import type { HealRecord } from '../workflows/types.ts';

export interface SummarySample {
  sample: SampleRecord;
  result?: ResultRecord;
}

export type PaidMode = 'agent' | 'extract' | 'cua' | 'scenario' | 'workflow' | 'heal' | 'fallback';

/** The modes a sample runs in, as its usage names them; anything else is the agent's. */
const SAMPLE_MODES: readonly PaidMode[] = ['agent', 'extract', 'cua', 'scenario', 'workflow'];

export interface ModeCost {
  mode: PaidMode;
  /** Samples that paid anything under this mode (a workflow sample that healed counts under both). */
  samples: number;
  promptTokens: number;
  completionTokens: number;
  /** Undefined when tokens were spent at no known price. */
  costUsd: number | undefined;
}

export interface FailureGroup {
  reason: string;
  count: number;
  statuses: string[];
  sampleIds: string[];
}

export interface SampleHeal extends HealRecord {
  sampleId: string;
}

export interface SampleWorkflow {
  id?: string;
  version: number;
  name: string;
}

export interface RunSummary {
  goal?: string;
  spec: { mode: string; model?: string; concurrency?: number; workflow?: string };
  counts: { status: string; count: number }[];
  failures: FailureGroup[];
  costs: ModeCost[];
  heals: SampleHeal[];
  workflows: Map<string, SampleWorkflow>;
  fields: string[];
}

const num = (v: Json | undefined): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const obj = (v: Json | undefined): JsonObject | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? v : undefined;

/**
 * A failure reason with what differs per sample taken out (URLs, quoted text, numbers, ids), so the
 * same failure on 300 pages reads as one line with 300 samples.
 */
export function normaliseReason(reason: string): string {
  const first = (reason.split('\n')[0] ?? '').trim();
  const out = first
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>)]*[^\s"'<>).,:;]/gi, '<url>')
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\b[0-9a-f]{12,}\b/gi, '<id>')
    .replace(/\d+(\.\d+)?/g, 'N')
    .replace(/\s+/g, ' ');
  const cut = out.length > 160 ? `${out.slice(0, 159)}…` : out;
  return cut || '(no reason given)';
}

/** Sample statuses that are not a plain success. */
const FAILING = new Set(['failed', 'needs_review', 'partial_success']);

export function groupFailures(samples: SummarySample[]): FailureGroup[] {
  const groups = new Map<string, FailureGroup>();
  for (const { sample, result } of samples) {
    const status = result?.status ?? sample.status;
    if (!FAILING.has(status)) continue;
    const reason = normaliseReason(result?.reason ?? sample.reason ?? '');
    const g = groups.get(reason) ?? { reason, count: 0, statuses: [], sampleIds: [] };
    g.count += 1;
    if (!g.statuses.includes(status)) g.statuses.push(status);
    g.sampleIds.push(sample.sampleId);
    groups.set(reason, g);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
}

/** The mode a sample ran in: its usage says so (the per-sample contract), else the run's spec. */
export function sampleMode(result: ResultRecord | undefined, specMode: string): PaidMode {
  const m = result?.usage.mode;
  const mode = typeof m === 'string' ? m : specMode;
  return SAMPLE_MODES.find((k) => k === mode) ?? 'agent';
}

interface Paid {
  reason: string;
  promptTokens: number;
  completionTokens: number;
}

function paidOf(usage: JsonObject): Paid[] {
  const list = Array.isArray(usage.paid) ? usage.paid : [];
  return list.flatMap((p) => {
    const o = obj(p);
    return o && typeof o.reason === 'string'
      ? [{ reason: o.reason, promptTokens: num(o.promptTokens), completionTokens: num(o.completionTokens) }]
      : [];
  });
}

/**
 * Tokens and cost by what paid for them. An agent / extract / cua / scenario sample's total goes to its mode; a
 * workflow sample's `paid` entries go to heal, fallback, or workflow (its AI nodes), and whatever its
 * total holds beyond them to workflow. A sample's cost is shared out in proportion to tokens.
 */
export function costsByMode(samples: SummarySample[], specMode: string): ModeCost[] {
  const rows = new Map<PaidMode, ModeCost & { unpriced: boolean; ids: Set<string> }>();
  const add = (mode: PaidMode, id: string, prompt: number, completion: number, cost: number | undefined) => {
    const row = rows.get(mode) ?? {
      mode,
      samples: 0,
      promptTokens: 0,
      completionTokens: 0,
      costUsd: 0,
      unpriced: false,
      ids: new Set<string>(),
    };
    row.ids.add(id);
    row.promptTokens += prompt;
    row.completionTokens += completion;
    if (cost === undefined) row.unpriced = row.unpriced || prompt + completion > 0;
    else row.costUsd = (row.costUsd ?? 0) + cost;
    rows.set(mode, row);
  };
  for (const { sample, result } of samples) {
    if (!result) continue;
    const u = result.usage;
    const prompt = num(u.promptTokens);
    const completion = num(u.completionTokens);
    const total = prompt + completion;
    const cost = typeof u.costUsd === 'number' ? u.costUsd : undefined;
    const share = (tokens: number) =>
      cost === undefined ? undefined : total > 0 ? (cost * tokens) / total : 0;
    const mode = sampleMode(result, specMode);
    if (mode !== 'workflow') {
      add(mode, sample.sampleId, prompt, completion, share(total));
      continue;
    }
    let restP = prompt;
    let restC = completion;
    for (const p of paidOf(u)) {
      const to: PaidMode = p.reason === 'heal' ? 'heal' : p.reason === 'fallback' ? 'fallback' : 'workflow';
      add(
        to,
        sample.sampleId,
        p.promptTokens,
        p.completionTokens,
        share(p.promptTokens + p.completionTokens),
      );
      restP -= p.promptTokens;
      restC -= p.completionTokens;
    }
    // A replay that paid nothing still counts as a workflow sample (at 0 tokens: the point of it).
    add(
      'workflow',
      sample.sampleId,
      Math.max(0, restP),
      Math.max(0, restC),
      share(Math.max(0, restP + restC)),
    );
  }
  const order: PaidMode[] = [...SAMPLE_MODES, 'heal', 'fallback'];
  return order.flatMap((m) => {
    const r = rows.get(m);
    if (!r) return [];
    return [
      {
        mode: m,
        samples: r.ids.size,
        promptTokens: r.promptTokens,
        completionTokens: r.completionTokens,
        costUsd: r.unpriced ? undefined : Math.round((r.costUsd ?? 0) * 1e6) / 1e6,
      },
    ];
  });
}

function healsOf(usage: JsonObject): HealRecord[] {
  const list = Array.isArray(usage.heals) ? usage.heals : [];
  return list.flatMap((h) => {
    const o = obj(h);
    return o && typeof o.alias === 'string' && Array.isArray(o.old) && Array.isArray(o.new)
      ? [o as unknown as HealRecord]
      : [];
  });
}

export function workflowOf(usage: JsonObject | undefined): SampleWorkflow | undefined {
  const w = obj(usage?.workflow);
  if (!w || typeof w.version !== 'number') return undefined;
  return {
    ...(typeof w.id === 'string' ? { id: w.id } : {}),
    version: w.version,
    name: typeof w.name === 'string' ? w.name : '',
  };
}

/**
 * The output fields, one column each: the spec's object schema's properties when it has them, else
 * every key the samples' data objects hold, in the order first seen (at most `max`).
 */
export function outputFields(spec: JsonObject, results: (ResultRecord | undefined)[], max = 24): string[] {
  const props = obj(obj(spec.outputSchema)?.properties);
  const fields: string[] = props ? Object.keys(props) : [];
  for (const r of results) {
    const data = obj(r?.data);
    if (!data) continue;
    for (const k of Object.keys(data)) if (!fields.includes(k)) fields.push(k);
  }
  return fields.slice(0, max);
}

export function summarizeRun(run: RunRecord, samples: SummarySample[]): RunSummary {
  const spec = run.spec;
  const specMode = typeof spec.mode === 'string' ? spec.mode : 'agent';
  const counts = new Map<string, number>();
  for (const { sample, result } of samples) {
    const s = result?.status ?? sample.status;
    counts.set(s, (counts.get(s) ?? 0) + 1);
  }
  const order = ['done', 'partial_success', 'needs_review', 'failed', 'running', 'pending'];
  const wf = obj(spec.workflow);
  const specWorkflow =
    typeof spec.workflow === 'string' ? spec.workflow : typeof wf?.id === 'string' ? wf.id : wf?.name;
  const workflows = new Map<string, SampleWorkflow>();
  const heals: SampleHeal[] = [];
  for (const { sample, result } of samples) {
    const w = workflowOf(result?.usage);
    if (w) workflows.set(sample.sampleId, w);
    for (const h of result ? healsOf(result.usage) : []) heals.push({ ...h, sampleId: sample.sampleId });
  }
  return {
    ...(typeof spec.goal === 'string' ? { goal: spec.goal } : {}),
    spec: {
      mode: specMode,
      ...(typeof spec.model === 'string' ? { model: spec.model } : {}),
      ...(typeof spec.concurrency === 'number' ? { concurrency: spec.concurrency } : {}),
      ...(typeof specWorkflow === 'string' ? { workflow: specWorkflow } : {}),
    },
    counts: [...counts]
      .map(([status, count]) => ({ status, count }))
      .sort((a, b) => order.indexOf(a.status) - order.indexOf(b.status)),
    failures: groupFailures(samples),
    costs: costsByMode(samples, specMode),
    heals,
    workflows,
    fields: outputFields(
      spec,
      samples.map((s) => s.result),
    ),
  };
}

// ── HTML ──────────────────────────────────────────────────────────────────────────────────────

/** Styles of the summary and the field cells; report.ts puts them in its one hashed style block. */
export const SUMMARY_CSS = `.summary{display:grid;grid-template-columns:minmax(260px,1fr) minmax(260px,1fr);gap:12px 28px;margin:8px 0 20px}
.summary h2{font-size:15px;margin:0 0 6px}.summary section{min-width:0}.goal{grid-column:1/-1;font-size:15px}
.chart .bar.done{fill:#2e7d32}.chart .bar.failed{fill:#c62828}.chart .bar.needs_review,.chart .bar.partial_success{fill:#f9a825}
.chart .bar.running,.chart .bar.pending{fill:#90a4ae}.chart text{font:12px system-ui,sans-serif;fill:#1d2330}
.summary table td,.summary table th{padding:3px 6px;font-size:13px}.heals code{word-break:break-all;font-size:12px}
td.field{min-width:7em;max-width:320px;overflow-wrap:break-word}td.field.empty{color:#999}.clip summary{cursor:pointer;color:#1d2330}
.clip[open] .cut{display:none}.clip[open] summary::after{content:"show less";color:#555;font-size:12px}
td.shot img{max-width:200px;border:1px solid #ccd;display:block}.wf{font:12px monospace;background:#eef4fc;border:1px solid #1565c0;border-radius:8px;padding:0 5px}`;

const money = (c: number | undefined) => (c === undefined ? 'unknown' : `$${c.toFixed(4)}`);

function chartSvg(counts: { status: string; count: number }[]): string {
  const max = Math.max(1, ...counts.map((c) => c.count));
  const rowH = 24;
  const width = 360;
  const labelW = 110;
  const barMax = width - labelW - 50;
  const bars = counts
    .map((c, i) => {
      const w = Math.max(c.count > 0 ? 2 : 0, Math.round((c.count / max) * barMax));
      const y = i * rowH;
      return (
        `<text x="0" y="${y + 16}">${esc(c.status)}</text>` +
        `<rect class="bar ${esc(c.status)}" data-status="${esc(c.status)}" data-count="${c.count}" x="${labelW}" y="${y + 4}" width="${w}" height="16" rx="2"></rect>` +
        `<text x="${labelW + w + 6}" y="${y + 16}">${c.count}</text>`
      );
    })
    .join('');
  return `<svg class="chart" id="status-chart" role="img" aria-label="samples by status" width="${width}" height="${Math.max(rowH, counts.length * rowH)}" viewBox="0 0 ${width} ${Math.max(rowH, counts.length * rowH)}">${bars}</svg>`;
}

function failuresHtml(groups: FailureGroup[]): string {
  if (groups.length === 0) return '<p id="failures">no failures</p>';
  const rows = groups
    .map((g) => {
      const ids =
        g.sampleIds.slice(0, 12).join(', ') +
        (g.sampleIds.length > 12 ? `, … ${g.sampleIds.length - 12} more` : '');
      return `<tr class="failure-group" data-count="${g.count}"><td class="n">${g.count}</td><td class="why">${esc(g.reason)}</td><td>${esc(g.statuses.join(', '))}</td><td class="ids">${esc(ids)}</td></tr>`;
    })
    .join('');
  return `<table id="failures"><thead><tr><th>#</th><th>reason</th><th>status</th><th>samples</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function costsHtml(costs: ModeCost[]): string {
  if (costs.length === 0) return '<p id="costs">no results yet</p>';
  const rows = costs
    .map(
      (c) =>
        `<tr class="mode-cost" data-mode="${c.mode}"><td>${c.mode}</td><td>${c.samples}</td><td class="mode-tokens">${c.promptTokens + c.completionTokens}</td><td>${c.promptTokens} / ${c.completionTokens}</td><td class="mode-cost-usd">${money(c.costUsd)}</td></tr>`,
    )
    .join('');
  return `<table id="costs"><thead><tr><th>paid for</th><th>samples</th><th>tokens</th><th>prompt / completion</th><th>cost</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function healsHtml(heals: SampleHeal[]): string {
  if (heals.length === 0) return '';
  const cand = (list: HealRecord['old']) => (list[0] ? describeCandidate(list[0]) : '—');
  const rows = heals
    .map(
      (h) =>
        `<tr class="heal" data-sample="${esc(h.sampleId)}" data-alias="${esc(h.alias)}"><td>${esc(h.sampleId)}</td><td>${esc(h.alias)}</td>` +
        `<td><code class="old">${esc(cand(h.old))}</code> → <code class="new">${esc(cand(h.new))}</code></td><td>${esc(h.via)}</td><td>${esc(h.reason)}</td><td>${h.confirmed ? 'written back' : 'not confirmed'}</td></tr>`,
    )
    .join('');
  return `<section class="heals"><h2>Heals (${heals.length})</h2><table id="heals"><thead><tr><th>sample</th><th>step</th><th>old → new locator</th><th>by</th><th>why</th><th>version</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

/** A workflow label for a sample row: which workflow and version it ran. */
export function workflowLabel(w: SampleWorkflow | undefined): string {
  if (!w) return '';
  const name = w.id ?? w.name;
  return `<span class="wf" data-workflow="${esc(name)}" data-version="${w.version}" title="browserfn workflow show ${esc(name)} --version ${w.version}">workflow ${esc(name)} v${w.version}</span>`;
}

/** The block at the top of the report. */
export function renderSummary(s: RunSummary): string {
  const spec = [
    `mode <b id="spec-mode">${esc(s.spec.mode)}</b>`,
    `model <b id="spec-model">${esc(s.spec.model ?? 'default')}</b>`,
    ...(s.spec.concurrency !== undefined
      ? [`concurrency <b id="spec-concurrency">${s.spec.concurrency}</b>`]
      : []),
    ...(s.spec.workflow ? [`workflow <b>${esc(s.spec.workflow)}</b>`] : []),
  ].join(' · ');
  const versions = new Map<string, number>();
  for (const w of s.workflows.values()) {
    const k = `${w.id ?? w.name} v${w.version}`;
    versions.set(k, (versions.get(k) ?? 0) + 1);
  }
  const ran = [...versions].map(([k, n]) => `${esc(k)}: ${n} sample${n === 1 ? '' : 's'}`).join('; ');
  return `<div class="summary" id="summary">
<p class="goal">${s.goal ? `<b>Goal</b> <span id="goal">${esc(s.goal)}</span><br>` : ''}${spec}${ran ? `<br>workflow versions run: ${ran}` : ''}</p>
<section><h2>Samples by status</h2>${chartSvg(s.counts)}</section>
<section><h2>Tokens and cost by mode</h2>${costsHtml(s.costs)}</section>
<section><h2>Failures by reason</h2>${failuresHtml(s.failures)}</section>
${healsHtml(s.heals)}
</div>`;
}

const CLIP = 140;

/** One data cell: text as text, long text clipped with the whole of it one click away. */
export function fieldCell(field: string, value: Json | undefined): string {
  if (value === undefined || value === null)
    return `<td class="field empty" data-field="${esc(field)}">—</td>`;
  const text =
    typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  const body =
    text.length > CLIP
      ? `<details class="clip"><summary><span class="cut">${esc(text.slice(0, CLIP))}…</span></summary>${esc(text)}</details>`
      : esc(text);
  return `<td class="field" data-field="${esc(field)}">${body}</td>`;
}
