/**
 * `workflow show` (issue 23 item 9): one self-contained HTML page that draws a workflow as a graph —
 * nodes top to bottom in document order, control nodes as frames holding their lanes (iterate body,
 * route branches, handle body and fallback, group), connectors between siblings — with deterministic
 * and AI nodes in distinct colours, and per node what a person debugging it needs: the pinned
 * target's first candidate, the last result (status, how it was resolved, ms), tokens and heals.
 * Pure: the caller reads the workflow, results and versions; nothing here touches a store or a page.
 * No script at all; the one style block is allowed by its hash and everything shown is escaped.
 */
import { createHash } from 'node:crypto';
import { AI_NODE_TYPES, type LocatorCandidate, type Workflow, type WorkflowNode } from './schema.ts';
import type { HealRecord, NodeResult } from './types.ts';

export const escapeHtml = (s: string): string =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');

/** A CSP source allowing exactly this inline text. */
export const cspHashSource = (text: string): string =>
  `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

export interface WorkflowVersionLine {
  version: number;
  createdAt: string;
  note?: string;
  verified: boolean;
}

export interface ShowOptions {
  /** Last results by alias (iterations keyed `alias[i]`), e.g. a sample's `WorkflowState.results`. */
  results?: Record<string, NodeResult>;
  heals?: HealRecord[];
  versions?: WorkflowVersionLine[];
  /** Store id, shown in the title when known. */
  id?: string;
  /** Where the results came from ("run r1, sample s3"). */
  resultsFrom?: string;
}

/** How a node type is drawn: `ai` may spend tokens, `control` holds other nodes, the rest never call a model. */
export type NodeKind = 'deterministic' | 'ai' | 'control';

const CONTROL_TYPES = new Set(['iterate', 'route', 'handle', 'group']);

export function nodeKind(type: WorkflowNode['type']): NodeKind {
  if (AI_NODE_TYPES.includes(type)) return 'ai';
  return CONTROL_TYPES.has(type) ? 'control' : 'deterministic';
}

/** One locator candidate in a few words. */
export function describeCandidate(c: LocatorCandidate): string {
  switch (c.kind) {
    case 'xpath':
      return `xpath ${c.value}`;
    case 'css':
      return `css ${c.value}`;
    case 'role':
      return `role ${c.role} "${c.name}"`;
    case 'text':
      return `text "${c.text}"${c.tag ? ` (${c.tag})` : ''}`;
  }
}

/** A node's results: its own, or every iteration's (`alias[0]`, `alias[1]`, …) when it ran in a loop. */
export function resultsFor(alias: string, results: Record<string, NodeResult> | undefined): NodeResult[] {
  if (!results) return [];
  const own = results[alias];
  if (own) return [own];
  return Object.entries(results)
    .filter(([key]) => key.startsWith(`${alias}[`))
    .map(([, r]) => r);
}

/** The last result in one line, summed over iterations (pure; unit-tested). */
export function resultLine(rs: NodeResult[]): { status: string; text: string; tokens: number } | undefined {
  if (rs.length === 0) return undefined;
  const tokens = rs.reduce((n, r) => n + r.usage.promptTokens + r.usage.completionTokens, 0);
  const ms = rs.reduce((n, r) => n + r.ms, 0);
  if (rs.length === 1) {
    const r = rs[0]!;
    return { status: r.status, text: `${r.status} · ${r.resolvedBy} · ${Math.round(r.ms)} ms`, tokens };
  }
  const failed = rs.filter((r) => r.status === 'failed').length;
  const by = new Map<string, number>();
  for (const r of rs) by.set(r.resolvedBy, (by.get(r.resolvedBy) ?? 0) + 1);
  const how = [...by].map(([k, n]) => `${k} ×${n}`).join(', ');
  return {
    status: failed > 0 ? 'failed' : 'ok',
    text: `${rs.length} runs: ${rs.length - failed} ok, ${failed} failed · ${how} · ${Math.round(ms)} ms`,
    tokens,
  };
}

/** What the node does, in one line: the action and its target, the instruction, the expression. */
export function nodeSummary(node: WorkflowNode): string {
  switch (node.type) {
    case 'browser_action': {
      const c = node.config;
      if ('target' in c) {
        const extra = 'value' in c ? ` "${c.value}"` : 'key' in c && c.action === 'press' ? ` ${c.key}` : '';
        return `${c.action}${extra}`;
      }
      if (c.action === 'navigate') return `navigate ${c.url}`;
      if (c.action === 'keypress') return `keypress ${c.key}`;
      if (c.action === 'switchTab') return `switchTab ${c.tabName}`;
      if (c.action === 'wait')
        return `wait${c.text ? ` for "${c.text}"` : ''}${c.selector ? ` for ${c.selector}` : ''}${c.duration !== undefined ? ` ≤ ${c.duration} ms` : ''}`;
      return c.action;
    }
    case 'browser_ai_action':
      return `${node.config.action}: ${node.config.instruction}`;
    case 'browser_query':
      return node.config.method === 'validate'
        ? `validate ${node.config.rules.map((r) => `${r.type} ${r.selector}`).join(', ')}`
        : `extract ${Object.entries(node.config.extractor.fields)
            .map(([k, f]) => `${k} ← ${f.selector}`)
            .join(', ')}${node.config.extractor.item ? ` per ${node.config.extractor.item}` : ''}`;
    case 'browser_ai_query':
      return `${node.config.method}: ${node.config.instruction}`;
    case 'transform':
      return node.config.expression;
    case 'cognition':
      return node.config.instruction;
    case 'agent':
      return `goal: ${node.config.goal}`;
    case 'context':
      return Object.entries(node.config.set)
        .map(([k, v]) => `${k} = ${v}`)
        .join('; ');
    case 'iterate':
      return `for each ${node.config.as} in ${node.config.over}${node.config.concurrency > 1 ? ` (${node.config.concurrency} at once)` : ''}`;
    case 'route':
      return `${node.config.branches.length} branch${node.config.branches.length === 1 ? '' : 'es'}${node.config.otherwise ? ' + otherwise' : ''}`;
    case 'handle':
      return node.config.retry
        ? `retry ×${node.config.retry.attempts}, backoff ${node.config.retry.backoffMs} ms`
        : 'error boundary';
    case 'group':
      return `${node.config.nodes.length} node${node.config.nodes.length === 1 ? '' : 's'}`;
  }
}

const CSS = `body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330;background:#fafbfc}
h1{font-size:20px;margin:0 0 4px}.sub{color:#555;margin:0 0 14px}
.legend{display:flex;gap:16px;margin:10px 0 18px;font-size:13px}.legend span{display:inline-flex;align-items:center;gap:6px}
.swatch{display:inline-block;width:14px;height:14px;border-radius:3px;border:2px solid}
.flow{display:flex;flex-direction:column;align-items:stretch;max-width:980px}
.node{border:2px solid;border-radius:8px;padding:8px 10px;background:#fff}
.node.deterministic,.swatch.deterministic{border-color:#2e7d32;background-color:#e8f5e9}
.node.ai,.swatch.ai{border-color:#8e24aa;background-color:#f3e5f5}
.node.control,.swatch.control{border-color:#1565c0;background-color:#eef4fc}
.node.failed{box-shadow:0 0 0 3px #e5393555}
.head{display:flex;gap:8px;align-items:baseline;flex-wrap:wrap}.alias{font-weight:700;font-family:ui-monospace,monospace}
.type{font-size:11px;text-transform:uppercase;letter-spacing:.04em;color:#444;border:1px solid #bbb;border-radius:10px;padding:0 6px}
.desc{color:#333;margin:2px 0}.what,.target{font-family:ui-monospace,monospace;font-size:12px;color:#222;word-break:break-all}
.result{font-size:12px;margin-top:4px}.result.ok{color:#1b5e20}.result.failed{color:#b71c1c}.result.skipped{color:#777}
.tokens{font-size:12px;color:#4a148c}.err{font-size:12px;color:#b71c1c}
.heal{font-size:12px;margin-top:4px;padding:4px 6px;border-left:3px solid #ef6c00;background:#fff3e0}
.heal code{word-break:break-all}
.edge{align-self:center;width:2px;height:18px;background:#90a4ae;position:relative;margin:0 0 6px}
.edge::after{content:"";position:absolute;left:-5px;bottom:-6px;border:6px solid transparent;border-top-color:#90a4ae;border-bottom:0}
.lanes{display:flex;gap:12px;margin-top:8px;align-items:flex-start}.lane{flex:1;min-width:0;border:1px dashed #90a4ae;border-radius:6px;padding:6px;background:#fff}
.lane-label{font-size:12px;color:#37474f;margin-bottom:6px;font-family:ui-monospace,monospace;word-break:break-all}
table{border-collapse:collapse;margin-top:8px}th,td{border-bottom:1px solid #dde;padding:4px 8px;text-align:left}
tr.current td{font-weight:600}`;

/** The page's policy: its style block by hash, no script, images only inline, nothing fetched. */
export const WORKFLOW_PAGE_CSP = [
  "default-src 'none'",
  `style-src ${cspHashSource(CSS)}`,
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const esc = escapeHtml;

function healHtml(h: HealRecord): string {
  const oldC = h.old[0] ? describeCandidate(h.old[0]) : '—';
  const newC = h.new[0] ? describeCandidate(h.new[0]) : '—';
  return (
    `<div class="heal" data-confirmed="${h.confirmed}">healed by ${esc(h.via)}${h.confirmed ? ' (written back)' : ' (not confirmed)'}: ` +
    `<code class="old">${esc(oldC)}</code> → <code class="new">${esc(newC)}</code><br>why: ${esc(h.reason)}</div>`
  );
}

function lane(label: string, nodes: WorkflowNode[], path: string, ctx: RenderCtx): string {
  return `<div class="lane"><div class="lane-label">${esc(label)}</div><div class="flow">${list(nodes, path, ctx)}</div></div>`;
}

interface RenderCtx {
  results: Record<string, NodeResult> | undefined;
  heals: HealRecord[];
}

function nodeHtml(node: WorkflowNode, path: string, ctx: RenderCtx): string {
  const kind = nodeKind(node.type);
  const line = resultLine(resultsFor(node.alias, ctx.results));
  const subtype =
    node.type === 'browser_action'
      ? node.config.action
      : 'method' in node.config
        ? node.config.method
        : 'action' in node.config
          ? node.config.action
          : undefined;
  const target =
    node.type === 'browser_action' && 'target' in node.config ? node.config.target.candidates[0] : undefined;
  const own = resultsFor(node.alias, ctx.results);
  const error = own.find((r) => r.error)?.error;
  const heals = ctx.heals.filter((h) => h.alias === node.alias);
  let inner = '';
  const c = node.config as Record<string, unknown>;
  if (node.type === 'iterate')
    inner = lane(nodeSummary(node), node.config.nodes, `${path}.config.nodes`, ctx);
  if (node.type === 'group') inner = lane('group', node.config.nodes, `${path}.config.nodes`, ctx);
  if (node.type === 'route')
    inner = [
      ...node.config.branches.map((b, i) =>
        lane(`when ${b.when}`, b.nodes, `${path}.config.branches.${i}.nodes`, ctx),
      ),
      ...(node.config.otherwise
        ? [lane('otherwise', node.config.otherwise, `${path}.config.otherwise`, ctx)]
        : []),
    ].join('');
  if (node.type === 'handle')
    inner = [
      lane('body', node.config.nodes, `${path}.config.nodes`, ctx),
      ...(node.config.fallback
        ? [lane('fallback (on error)', node.config.fallback, `${path}.config.fallback`, ctx)]
        : []),
    ].join('');
  return (
    `<div class="node ${kind}${line?.status === 'failed' ? ' failed' : ''}" data-alias="${esc(node.alias)}" data-type="${esc(node.type)}" data-kind="${kind}" data-path="${esc(path)}">` +
    `<div class="head"><span class="alias">${esc(node.alias)}</span><span class="type">${esc(node.type)}${subtype ? ` · ${esc(String(subtype))}` : ''}</span>` +
    `${c.store_variable ? '<span class="type">returned</span>' : ''}</div>` +
    (node.description ? `<div class="desc">${esc(node.description)}</div>` : '') +
    (kind !== 'control' ? `<div class="what">${esc(nodeSummary(node))}</div>` : '') +
    (target ? `<div class="target">target: ${esc(describeCandidate(target))}</div>` : '') +
    (line
      ? `<div class="result ${esc(line.status)}">last result: ${esc(line.text)}</div><div class="tokens">tokens: ${line.tokens}</div>`
      : '') +
    (error ? `<div class="err">${esc(error.message)} — ${esc(error.resolution)}</div>` : '') +
    heals.map(healHtml).join('') +
    (inner ? `<div class="lanes">${inner}</div>` : '') +
    `</div>`
  );
}

function list(nodes: WorkflowNode[], path: string, ctx: RenderCtx): string {
  return nodes
    .map((n, i) => (i > 0 ? '<div class="edge"></div>' : '') + nodeHtml(n, `${path}.${i}`, ctx))
    .join('');
}

function versionsHtml(versions: WorkflowVersionLine[], current: number): string {
  const rows = versions
    .map(
      (v) =>
        `<tr class="version${v.version === current ? ' current' : ''}" data-version="${v.version}"><td>v${v.version}</td><td>${esc(v.createdAt)}</td>` +
        `<td>${v.verified ? 'verified' : 'not verified'}</td><td>${esc(v.note ?? '')}</td></tr>`,
    )
    .join('');
  return `<h2>Versions</h2><table id="versions"><thead><tr><th>version</th><th>created</th><th>verified</th><th>note</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** Whether replay reads pages without a browser, and why (not). */
export function staticReadLine(workflow: Workflow): string | undefined {
  const s = workflow.staticRead;
  if (!s) return undefined;
  if (!s.enabled)
    return 'read without a browser: switched off (staticRead.enabled false): every page opens in the browser';
  if (s.verified)
    return `read without a browser: yes — the served HTML gave the same data as the rendered page${s.url ? ` (${s.url})` : ''}; a page that misses falls back to the browser`;
  return `read without a browser: no — ${s.reason ?? 'not verified'}`;
}

const staticReadHtml = (workflow: Workflow) => {
  const line = staticReadLine(workflow);
  return line
    ? `<p class="sub" id="static-read" data-static="${workflow.staticRead?.verified && workflow.staticRead.enabled ? 'on' : 'off'}">${esc(line)}</p>`
    : '';
};

/** The page (pure). */
export function renderWorkflowPage(workflow: Workflow, opts: ShowOptions = {}): string {
  const ctx: RenderCtx = { results: opts.results, heals: opts.heals ?? [] };
  const inputs = Object.entries(workflow.inputs);
  const title = `${workflow.name} v${workflow.version}`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>workflow ${esc(title)}</title>
<meta http-equiv="Content-Security-Policy" content="${esc(WORKFLOW_PAGE_CSP.replace(/; frame-ancestors[^;]*/, ''))}">
<style>${CSS}</style></head><body>
<h1>${esc(workflow.name)} <small>v${workflow.version}</small></h1>
<p class="sub">${opts.id ? `id <code>${esc(opts.id)}</code> · ` : ''}${workflow.source ? `compiled from ${esc(workflow.source.kind)}${workflow.source.runId ? ` run ${esc(workflow.source.runId)}` : ''} · ` : ''}${inputs.length ? `inputs: ${inputs.map(([k, v]) => `${esc(k)} (${esc(v.type)})`).join(', ')}` : 'no inputs'}${opts.resultsFrom ? ` · results from ${esc(opts.resultsFrom)}` : ''}</p>
${workflow.description ? `<p>${esc(workflow.description)}</p>` : ''}
${staticReadHtml(workflow)}
<div class="legend"><span><i class="swatch deterministic"></i>deterministic (never calls a model)</span><span><i class="swatch ai"></i>AI (may spend tokens)</span><span><i class="swatch control"></i>control flow</span></div>
<div class="flow" id="graph">${list(workflow.nodes, 'nodes', ctx)}</div>
${opts.versions?.length ? versionsHtml(opts.versions, workflow.version) : ''}
</body></html>`;
}
