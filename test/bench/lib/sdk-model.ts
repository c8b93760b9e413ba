/**
 * The scripted model of bench:stagehand-sdk: both sides' prompts get the same decision (fill the
 * field the instruction names, point at the element observe is after, read the heading), each in
 * its own side's schema.
 */
import type { RecordedRequest, ScriptedReply } from '../../support/llm-server.ts';

/** `[12] role: name` (ours) or `[0-12] role: name` (Stagehand's): the id as that side writes it. */
function idOf(text: string, role: string, name: string): string {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`\\[([\\d-]+)\\] ${role}: ${escaped}(?:$| )`, 'm').exec(text);
  if (!m) throw new Error(`no "${role}: ${name}" in the prompt`);
  return m[1]!;
}

/** Which element an observe instruction is after, as both sides' scripted model decides it. */
const observed = (r: RecordedRequest) =>
  /stay signed in/.test(r.text)
    ? { role: 'checkbox', name: 'Remember me' }
    : { role: 'button', name: 'Sign in' };

/** The page's top heading as each side's outline writes it (`h1: …` / `heading: …`). */
const headingOf = (text: string) => /^\s*(?:\[[\d-]+\] )?(?:h1|heading): (.+)$/m.exec(text)?.[1] ?? '';

/** The field an act instruction means, and what goes in it. */
const actTarget = (r: RecordedRequest) =>
  /Email field/.test(r.text)
    ? { name: 'Email', value: 'ada@acme.test' }
    : { name: 'Password', value: '%pw%' };

/** Each side's schema, the same decision: fill a field, point at an element, read the heading. */
export function sdkBenchReply(r: RecordedRequest): ScriptedReply {
  switch (r.schemaName) {
    case 'choose_action': {
      const { name, value } = actTarget(r);
      return {
        json: {
          elementId: Number(idOf(r.text, 'textbox', name)),
          method: 'fill',
          arguments: [value],
          twoStep: false,
          reason: `the ${name} box`,
        },
      };
    }
    case 'act': {
      const { name, value } = actTarget(r);
      return {
        json: {
          action: {
            elementId: idOf(r.text, 'textbox', name),
            description: `the ${name} box`,
            method: 'fill',
            arguments: [value],
          },
          twoStep: false,
        },
      };
    }
    case 'list_elements':
    case 'Observation': {
      const { role, name } = observed(r);
      const id = idOf(r.text, role, name);
      const method = role === 'checkbox' ? 'check' : 'click';
      return {
        json: {
          elements: [
            {
              elementId: r.schemaName === 'list_elements' ? Number(id) : id,
              description: name,
              // Stagehand's schema has no "check": a checkbox is clicked there.
              method: r.schemaName === 'list_elements' ? method : 'click',
              arguments: [],
            },
          ],
        },
      };
    }
    case 'extracted':
      return { json: { data: { heading: headingOf(r.text) }, done: true } };
    case 'Extraction':
      return { json: { heading: headingOf(r.text) } };
    case 'Metadata':
      return { json: { progress: 'heading read', completed: true } };
    default:
      return { status: 400 };
  }
}
