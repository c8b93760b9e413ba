/**
 * The samples of a run: from CSV text (`sample_id,url` plus input columns handed to the agent), from a
 * single URL, or from the planner's list. Every problem is reported with its line and column.
 */
import { parse } from 'csv-parse/sync';
import { ID_RULE, ID_RULE_TEXT } from '../store/names.ts';

export interface Sample {
  sampleId: string;
  url: string;
  /** The other CSV columns, by header name. */
  input: Record<string, string>;
}

export class SamplesError extends Error {
  override name = 'SamplesError';
}

// Sample ids follow the one rule every edge applies to ids (lib/store/names.ts).
const ID = ID_RULE;
export const MAX_SAMPLES = 100_000;

function checkUrl(value: string, where: string): string {
  let u: URL;
  try {
    u = new URL(value.trim());
  } catch {
    throw new SamplesError(`${where}: url "${value}" is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new SamplesError(`${where}: url "${value}" must start with http:// or https://`);
  return u.toString();
}

function checkId(value: string, where: string): string {
  const id = value.trim();
  if (!ID.test(id)) throw new SamplesError(`${where}: sample_id "${value}" must be ${ID_RULE_TEXT}`);
  return id;
}

/** Fails on the second use of an id, naming both places. */
function unique(samples: { sample: Sample; where: string }[]): Sample[] {
  const seen = new Map<string, string>();
  for (const { sample, where } of samples) {
    const first = seen.get(sample.sampleId);
    if (first) throw new SamplesError(`${where}: sample_id "${sample.sampleId}" is already used at ${first}`);
    seen.set(sample.sampleId, where);
  }
  if (samples.length === 0) throw new SamplesError('no samples: the input has a header but no rows');
  if (samples.length > MAX_SAMPLES)
    throw new SamplesError(`too many samples (${samples.length} > ${MAX_SAMPLES})`);
  return samples.map((s) => s.sample);
}

/** Samples from CSV text whose header has `sample_id` and `url`; other columns become `input`. */
export function samplesFromCsv(text: string, source = 'CSV'): Sample[] {
  let rows: string[][];
  try {
    rows = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: false, trim: false });
  } catch (err) {
    const e = err as Error & { lines?: number; column?: number };
    throw new SamplesError(`${source}: ${e.message}`);
  }
  const header = rows[0]?.map((h) => h.trim());
  if (!header) throw new SamplesError(`${source}: empty file (expected a header "sample_id,url,…")`);
  const idCol = header.indexOf('sample_id');
  const urlCol = header.indexOf('url');
  if (idCol < 0 || urlCol < 0)
    throw new SamplesError(
      `${source} line 1: the header needs "sample_id" and "url" columns, got "${header.join(',')}"`,
    );
  const dup = header.find((h, i) => header.indexOf(h) !== i);
  if (dup !== undefined) throw new SamplesError(`${source} line 1: column "${dup}" appears twice`);
  const out: { sample: Sample; where: string }[] = [];
  // csv-parse counts records, not lines; a quoted value may span lines, so keep its own line count.
  const lines = lineNumbers(text, rows.length);
  for (let r = 1; r < rows.length; r++) {
    const row = rows[r]!;
    const line = lines[r] ?? r + 1;
    const where = (col: number) => `${source} line ${line}, column ${col + 1} (${header[col]})`;
    const input: Record<string, string> = {};
    header.forEach((h, c) => {
      if (c !== idCol && c !== urlCol && h) input[h] = row[c] ?? '';
    });
    out.push({
      sample: {
        sampleId: checkId(row[idCol] ?? '', where(idCol)),
        url: checkUrl(row[urlCol] ?? '', where(urlCol)),
        input,
      },
      where: `${source} line ${line}`,
    });
  }
  return unique(out);
}

/** Line where each record starts (1-based), counting newlines outside quotes. */
function lineNumbers(text: string, records: number): number[] {
  const starts: number[] = [];
  let line = 1;
  let quoted = false;
  let atRecordStart = true;
  for (let i = 0; i < text.length && starts.length < records; i++) {
    const ch = text[i];
    if (atRecordStart && ch !== '\n' && ch !== '\r') {
      starts.push(line);
      atRecordStart = false;
    }
    if (ch === '"') quoted = !quoted;
    else if (ch === '\n') {
      line++;
      if (!quoted) atRecordStart = true;
    }
  }
  return starts;
}

/** One sample for `--url`: its id is the host and path, made safe. */
export function sampleFromUrl(url: string, sampleId?: string): Sample[] {
  const u = checkUrl(url, '--url');
  const id =
    sampleId ??
    `${new URL(u).host}${new URL(u).pathname}`
      .replace(/[^\w.-]+/g, '_')
      .replace(/_+$/, '')
      .slice(0, 128);
  return [{ sampleId: checkId(id || 'sample', '--url'), url: u, input: {} }];
}

/** Samples from a list (the planner's, or a JSON API body). */
export function samplesFromList(
  list: { sample_id?: string; sampleId?: string; url: string; input?: Record<string, string> }[],
  source = 'samples',
): Sample[] {
  return unique(
    list.map((s, i) => {
      const where = `${source}[${i}]`;
      return {
        sample: {
          sampleId: checkId(s.sampleId ?? s.sample_id ?? '', where),
          url: checkUrl(s.url, where),
          input: { ...(s.input ?? {}) },
        },
        where,
      };
    }),
  );
}
