/**
 * The pure pieces of compiling: a recorded element action → a pinned `browser_action` node (its
 * candidates, the words the heal falls back to, the post-conditions the run saw), per-sample
 * values → typed inputs, URLs → patterns.
 */
import {
  type LocatorCandidate,
  type PostCondition,
  type Workflow,
  type WorkflowInput,
  type WorkflowNode,
  WorkflowSchema,
} from './schema.ts';

/** A run that cannot be compiled, and why (shown to the caller as is). */
export class CompileError extends Error {
  override name = 'CompileError';
}

/** The compiled document, validated: a compiler bug surfaces here, not at replay. */
export function finishCompiled(doc: unknown): Workflow {
  const got = WorkflowSchema.safeParse(doc);
  if (!got.success)
    throw new CompileError(
      `the compiled workflow is not valid: ${got.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return got.data;
}

/** An element action as it was done and seen: the common form of agent logs and act results. */
export interface RecordedAction {
  method: 'click' | 'fill' | 'select' | 'check' | 'uncheck' | 'press';
  role: string;
  name: string;
  candidates: LocatorCandidate[];
  /** fill / select: what was entered (secrets as `%name%`); press: the key. */
  value?: string;
  /** The words of the original instruction, when a person or model wrote one (acts). */
  instruction?: string;
  urlBefore: string;
  /** What the page showed after it. */
  after?: { url?: string; value?: string; checked?: boolean; appeared?: string };
}

const NOUN: Record<string, string> = {
  textbox: 'field',
  searchbox: 'search field',
  spinbutton: 'field',
  combobox: 'dropdown',
  listbox: 'list',
  checkbox: 'checkbox',
  switch: 'switch',
  radio: 'option',
  link: 'link',
  button: 'button',
  tab: 'tab',
  menuitem: 'menu item',
};

/** What the element is, in words the matcher and the model both read ("the "Quantity" field"). */
export function describeElement(role: string, name: string): string {
  const noun = NOUN[role] ?? (role || 'element');
  return name.trim() ? `the "${name.trim()}" ${noun}` : `the ${noun}`;
}

/** A URL as a pattern that other samples' URLs of the same page kind also match. */
export function urlPattern(url: string): string {
  try {
    const u = new URL(url);
    // Numbers and long ids in the path are per-item; the query carries per-sample values.
    const path = u.pathname
      .split('/')
      .map((seg) =>
        /\d/.test(seg) && /^[\w-]+$/.test(seg) && /^\d+$|\d{3,}|[a-f\d]{8,}/i.test(seg) ? '*' : seg,
      )
      .join('/');
    return `*${path}${u.search || u.hash ? '*' : ''}`;
  } catch {
    return '*';
  }
}

/** Inputs lifted from the sample: a typed value equal to an input column becomes `{{inputs.col}}`. */
export class InputLifter {
  readonly inputs: Record<string, WorkflowInput> = {};
  constructor(private readonly columns: Record<string, string>) {}

  lift(value: string): string {
    if (/%[A-Za-z_][\w]*%/.test(value)) return value; // a secret placeholder stays a secret
    for (const [col, v] of Object.entries(this.columns)) {
      if (v === '' || v !== value || !/^[A-Za-z_][\w]*$/.test(col)) continue;
      this.inputs[col] ??= { type: 'string', default: v, description: `per-sample value (was "${v}")` };
      return `{{inputs.${col}}}`;
    }
    return value;
  }

  url(startUrl: string): string {
    this.inputs.url ??= { type: 'string', default: startUrl, description: 'the page the workflow starts on' };
    return '{{inputs.url}}';
  }
}

/** Aliases unique within the document, from what the step does. */
export class Aliases {
  private used = new Set<string>();
  make(words: string): string {
    const base =
      words
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '_')
        .replace(/^_+|_+$/g, '')
        .replace(/^(\d)/, 's_$1')
        .slice(0, 40) || 'step';
    let alias = /^[a-z]/.test(base) ? base : `s_${base}`;
    for (let i = 2; this.used.has(alias); i++) alias = `${base}_${i}`;
    this.used.add(alias);
    return alias;
  }
}

export function navigateNode(alias: string, url: string, description: string): WorkflowNode {
  return { alias, description, type: 'browser_action', config: { action: 'navigate', url } };
}

/** A recorded element action as a pinned step; `lifted` is its value with inputs put in. */
export function pinnedNode(alias: string, a: RecordedAction, lifted: string | undefined): WorkflowNode {
  const instruction = a.instruction?.trim() || describeElement(a.role, a.name);
  const target = {
    candidates: a.candidates.slice(0, 12),
    instruction,
    ...(a.role ? { expect: { role: a.role, name: a.name } } : {}),
  };
  const post: PostCondition[] = [];
  const urlAfter = a.after?.url;
  if (urlAfter && urlAfter !== a.urlBefore) post.push({ kind: 'url', pattern: urlPattern(urlAfter) });
  if ((a.method === 'fill' || a.method === 'select') && lifted !== undefined) {
    // The field holds what was typed; a select holds its option's value, which only the run saw.
    if (a.method === 'fill') post.push({ kind: 'value', equals: lifted });
    else if (a.after?.value !== undefined && lifted === a.value)
      post.push({ kind: 'value', equals: a.after.value });
  }
  if ((a.method === 'check' || a.method === 'uncheck') && a.after?.checked !== undefined)
    post.push({ kind: 'checked', equals: a.after.checked });
  // A press that stayed on the page and brought up a message: the message is its effect.
  if (a.after?.appeared && post.every((p) => p.kind !== 'url') && a.method !== 'fill')
    post.push({ kind: 'text', contains: a.after.appeared });
  const postconditions = post.length ? { postconditions: post } : {};
  const description = `${a.method} ${describeElement(a.role, a.name)}`;
  if (a.method === 'fill' || a.method === 'select')
    return {
      alias,
      description,
      type: 'browser_action',
      config: { action: a.method, target, value: lifted ?? '', ...postconditions },
    };
  if (a.method === 'press')
    return {
      alias,
      description,
      type: 'browser_action',
      config: { action: 'press', target, key: a.value ?? 'Enter', ...postconditions },
    };
  return {
    alias,
    description,
    type: 'browser_action',
    config: { action: a.method, target, ...postconditions },
  };
}
