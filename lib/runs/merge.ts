/**
 * A run's merge: `combined.csv` (one row per sample, sorted by id, nested values as JSON),
 * `results.json`, totals on the run, and the manifest over every evidence file.
 */
import { stringify } from 'csv-stringify/sync';
import { evidenceKey, sampleEvidenceKey } from '../store/keys.ts';
import { sealManifest } from '../store/manifest-store.ts';
import type {
  EvidenceStore,
  Json,
  JsonObject,
  ResultRecord,
  RunRecord,
  RunStore,
  SampleRecord,
  SampleStatus,
} from '../store/ports.ts';
import { manifestedEvidence } from './manifested-evidence.ts';

export interface RunTotals {
  samples: number;
  /** Samples per status; `pending` counts samples that have no result yet. */
  counts: Record<SampleStatus, number>;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  costUsd: number;
  /** From the run's creation to the latest result. */
  durationMs: number;
  /** Sum of the samples' own working time. */
  sampleMs: number;
  /**
   * Tokens by what they were spent on: the agent (a fallback included), one-read extraction,
   * computer use, scenario steps, a workflow's AI nodes, and heals of workflow steps. A mode nothing
   * was spent on is absent.
   */
  tokensByMode?: Partial<Record<TokenMode, { promptTokens: number; completionTokens: number }>>;
  /** The judge's verdicts, when it ruled on the run. */
  verdicts?: Record<SampleVerdict['verdict'], number>;
}

const num = (v: Json | undefined) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export type TokenMode = 'agent' | 'extract' | 'cua' | 'scenario' | 'workflow' | 'heal';

/**
 * Adds one result's tokens to `into`, split by mode (a workflow sample's `paid` list says why, and
 * what its total holds beyond that list was the workflow's own; a usage naming no mode is the agent's).
 */
export function addTokensByMode(
  into: NonNullable<RunTotals['tokensByMode']>,
  usage: ResultRecord['usage'],
): void {
  const add = (mode: TokenMode, p: number, c: number) => {
    if (p + c === 0) return;
    const t = into[mode] ?? { promptTokens: 0, completionTokens: 0 };
    into[mode] = t;
    t.promptTokens += p;
    t.completionTokens += c;
  };
  const mode = usage.mode;
  if (mode !== 'workflow') {
    const m: TokenMode = mode === 'extract' || mode === 'cua' || mode === 'scenario' ? mode : 'agent';
    add(m, num(usage.promptTokens), num(usage.completionTokens));
    return;
  }
  let restP = num(usage.promptTokens);
  let restC = num(usage.completionTokens);
  const paid = Array.isArray(usage.paid) ? usage.paid : [];
  for (const entry of paid) {
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) continue;
    const why = entry.reason === 'heal' ? 'heal' : entry.reason === 'fallback' ? 'agent' : 'workflow';
    add(why, num(entry.promptTokens), num(entry.completionTokens));
    restP -= num(entry.promptTokens);
    restC -= num(entry.completionTokens);
  }
  // A crash record keeps the tokens spent but no paid list: they were the workflow's.
  add('workflow', Math.max(0, restP), Math.max(0, restC));
}

/** Totals from the samples and the results written so far (pure). */
export function totalsOf(run: RunRecord, samples: SampleRecord[], results: ResultRecord[]): RunTotals {
  const counts: Record<SampleStatus, number> = {
    pending: 0,
    running: 0,
    done: 0,
    partial_success: 0,
    failed: 0,
    needs_review: 0,
  };
  const done = new Set(results.map((r) => r.sampleId));
  for (const s of samples)
    if (!done.has(s.sampleId)) counts[s.status === 'running' ? 'running' : 'pending']++;
  const t = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, costUsd: 0, sampleMs: 0 };
  let last = Date.parse(run.createdAt);
  const tokensByMode: NonNullable<RunTotals['tokensByMode']> = {};
  for (const r of results) {
    counts[r.status]++;
    addTokensByMode(tokensByMode, r.usage);
    t.promptTokens += num(r.usage.promptTokens);
    t.completionTokens += num(r.usage.completionTokens);
    t.cachedTokens += num(r.usage.cachedTokens);
    t.costUsd += num(r.usage.costUsd);
    t.sampleMs += num(r.usage.ms);
    last = Math.max(last, Date.parse(r.writtenAt));
  }
  return {
    samples: samples.length,
    counts,
    ...t,
    tokensByMode,
    costUsd: Math.round(t.costUsd * 1e6) / 1e6,
    durationMs: Math.max(0, last - Date.parse(run.createdAt)),
  };
}

// Numbers stay numbers: csv-stringify leaves a negative number alone but escapes the text "-1".
const cell = (v: Json | undefined): string | number =>
  v === undefined || v === null
    ? ''
    : typeof v === 'object'
      ? JSON.stringify(v)
      : typeof v === 'number'
        ? v
        : String(v);

export interface CsvOptions {
  /**
   * Keep cells exactly as extracted. By default a text cell starting with `=`, `+`, `-`, `@`, tab or
   * carriage return gets a leading `'` (csv-stringify's `escape_formulas`), so a spreadsheet shows
   * page-derived text instead of running it as a formula.
   */
  raw?: boolean;
  /** The judge's verdicts by sample id: adds `verdict` and `verdict_reason` columns. */
  verdicts?: Map<string, SampleVerdict>;
}

/** What combined.csv and the totals keep of a judge's verdict. */
export interface SampleVerdict {
  verdict: 'pass' | 'fail' | 'uncertain';
  reasoning: string;
}

/** combined.csv text (pure): fixed columns, then every data field in order of first appearance. */
export function combinedCsv(
  samples: SampleRecord[],
  results: ResultRecord[],
  options: CsvOptions = {},
): string {
  const byId = new Map(results.map((r) => [r.sampleId, r]));
  const sorted = [...samples].sort((a, b) =>
    a.sampleId < b.sampleId ? -1 : a.sampleId > b.sampleId ? 1 : 0,
  );
  const objectOf = (r: ResultRecord | undefined): JsonObject | undefined =>
    r?.data && typeof r.data === 'object' && !Array.isArray(r.data) ? r.data : undefined;
  const fields: string[] = [];
  let scalarData = false;
  for (const r of results) {
    const obj = objectOf(r);
    if (obj) {
      for (const k of Object.keys(obj)) if (!fields.includes(k)) fields.push(k);
    } else if (r.data !== null) scalarData = true;
  }
  const judged = options.verdicts && options.verdicts.size > 0 ? options.verdicts : undefined;
  const fixed = ['sample_id', 'url', 'status', 'reason', ...(judged ? ['verdict', 'verdict_reason'] : [])];
  const tail = ['prompt_tokens', 'completion_tokens', 'cost_usd'];
  // A data field named like one of our columns keeps its value under a prefixed name.
  const dataCols = fields.map((f) =>
    fixed.includes(f) || tail.includes(f) || f === 'data' ? `data.${f}` : f,
  );
  const header = [...fixed, ...dataCols, ...(scalarData ? ['data'] : []), ...tail];
  const rows = sorted.map((s) => {
    const r = byId.get(s.sampleId);
    const obj = objectOf(r);
    return [
      s.sampleId,
      s.url,
      r?.status ?? s.status,
      r?.reason ?? s.reason ?? '',
      ...(judged ? [judged.get(s.sampleId)?.verdict ?? '', judged.get(s.sampleId)?.reasoning ?? ''] : []),
      ...fields.map((f) => cell(obj?.[f])),
      ...(scalarData ? [obj ? '' : cell(r?.data)] : []),
      cell(r?.usage.promptTokens),
      cell(r?.usage.completionTokens),
      cell(r?.usage.costUsd),
    ];
  });
  return stringify([header, ...rows], { escape_formulas: !options.raw });
}

export interface MergeOutput {
  totals: RunTotals;
  csvKey: string;
  resultsKey: string;
  manifestHead: string;
}

/** Writes the merged files and the manifest, then stores totals and the chain head on the run. */
export async function mergeRun(
  runStore: RunStore,
  evidence: EvidenceStore,
  tenant: string,
  runId: string,
  opts: { verdicts?: boolean } = {},
): Promise<MergeOutput> {
  const run = await runStore.getRun(tenant, runId);
  if (!run) throw new Error(`run ${runId} not found`);
  const [samples, results] = await Promise.all([
    runStore.listSamples(tenant, runId),
    runStore.listResults(tenant, runId),
  ]);
  const verdicts =
    opts.verdicts || run.spec.judge ? await verdictsOf(evidence, tenant, runId, results) : undefined;
  const totals = totalsOf(run, samples, results);
  if (verdicts?.size) {
    const counts = { pass: 0, fail: 0, uncertain: 0 };
    for (const v of verdicts.values()) counts[v.verdict]++;
    totals.verdicts = counts;
  }
  // The merged files go into the run's own manifest part; the samples' files are in theirs already.
  const runFiles = manifestedEvidence(evidence, tenant, runId);
  const csv = await runFiles.put(
    evidenceKey(tenant, runId, 'combined.csv'),
    combinedCsv(samples, results, verdicts ? { verdicts } : {}),
    'text/csv',
  );
  const json = await runFiles.put(
    evidenceKey(tenant, runId, 'results.json'),
    JSON.stringify({ runId, totals, results }, null, 2),
    'application/json',
  );
  // Samples' parts in id order, then the run's: the head stored on the run is what `verify` checks.
  const { head: manifestHead } = await sealManifest(evidence, tenant, runId);
  const unfinished = totals.counts.pending + totals.counts.running;
  const current = await runStore.getRun(tenant, runId);
  const status = current?.status === 'cancelled' ? 'cancelled' : unfinished > 0 ? 'failed' : 'done';
  await runStore.updateRun(tenant, runId, {
    status,
    totals: totals as unknown as JsonObject,
    manifestHead,
    ...(status === 'failed' ? { reason: `${unfinished} samples have no result` } : {}),
  });
  return { totals, csvKey: csv.key, resultsKey: json.key, manifestHead };
}

/** The verdicts stored beside the samples' evidence (`judge.json`), read a few at a time. */
async function verdictsOf(
  evidence: EvidenceStore,
  tenant: string,
  runId: string,
  results: ResultRecord[],
): Promise<Map<string, SampleVerdict>> {
  const out = new Map<string, SampleVerdict>();
  const AT_ONCE = 16;
  for (let i = 0; i < results.length; i += AT_ONCE)
    await Promise.all(
      results.slice(i, i + AT_ONCE).map(async (r) => {
        const bytes = await evidence
          .get(sampleEvidenceKey(tenant, runId, r.sampleId, 'judge.json'))
          .catch(() => undefined);
        if (!bytes) return;
        try {
          const v = JSON.parse(new TextDecoder().decode(bytes)) as SampleVerdict;
          if (v.verdict === 'pass' || v.verdict === 'fail' || v.verdict === 'uncertain')
            out.set(r.sampleId, { verdict: v.verdict, reasoning: String(v.reasoning ?? '') });
        } catch {
          // An unreadable verdict is left out; verify names the file if it was tampered with.
        }
      }),
    );
  return out;
}
