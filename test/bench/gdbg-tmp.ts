import { readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pageForms } from '../../lib/ops/matcher/ground/fields.ts';

const dir = join(tmpdir(), 'bfn-grounding-cache');
const h = readdirSync(dir)
  .map((d) => [d, statSync(join(dir, d)).mtimeMs] as const)
  .sort((a, b) => b[1] - a[1])[0]![0];
const file = process.argv[2]!;
const data = JSON.parse(readFileSync(join(dir, h, `${file.replace('/', '__')}.json`), 'utf8'));
const labelOf = new Map<number, string>();
for (const t of data.targets) if (t.id) labelOf.set(t.id, `${t.label}${t.visible ? '' : '(hidden)'}`);
const { fields, forms } = pageForms(data.snap.elements);
for (const e of data.snap.elements) {
  if (!e.interactive) continue;
  const f = fields.get(e.id);
  const interesting = f || e.role === 'button' || labelOf.has(e.id);
  if (!interesting) continue;
  console.log(
    `[${e.id}] ${e.role}${e.inputType ? `(${e.inputType})` : ''} '${e.name.slice(0, 40)}' ${labelOf.get(e.id) ?? ''} form=${e.facts?.form ?? '-'}${e.facts?.form ? `(${forms.get(e.facts.form)?.kind})` : ''} ${e.facts?.concealed ? 'CONCEALED' : ''} ${e.inViewport ? 'inview' : 'out'} box=${e.box ? `${e.box.x},${e.box.y},${e.box.width}x${e.box.height}` : '-'} ${f ? `kind=${f.kind} pw=${f.password ?? ''} says=${[...f.says].map(([c, s]) => `${c}:${s}`).join(',')} bp=${f.beforePassword} usable=${f.usable}` : ''} ${JSON.stringify({ a: e.facts?.attrs, n: e.facts?.nearby, ac: e.facts?.autocomplete, l: e.label, p: e.placeholder })}`,
  );
}
