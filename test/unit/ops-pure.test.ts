import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { placeholders, substitute } from '../../lib/actions/helpers.ts';
import { cacheKey, normalizeInstruction } from '../../lib/ops/cache.ts';
import { chunkTree } from '../../lib/ops/chunks.ts';
import { PREPARED_LIMIT, preparedSchema, prepareSchema } from '../../lib/ops/extract-schema.ts';
import { extractSystem } from '../../lib/ops/prompts.ts';
import { injectUrls, urlFieldsToIds } from '../../lib/ops/url-fields.ts';

describe('url fields', () => {
  const schema = z.object({
    products: z.array(
      z.object({ name: z.string(), url: z.string().url(), image: z.string().url().optional() }),
    ),
    home: z.string().url(),
  });
  it('asks for link ids instead of URLs and puts the real hrefs back', () => {
    const { json } = prepareSchema(schema);
    const { schema: asked, paths } = urlFieldsToIds(json);
    expect(paths).toEqual([['products', '*', 'url'], ['products', '*', 'image'], ['home']]);
    expect(JSON.stringify(asked)).not.toContain('"format":"uri"');
    const urls = { '4': 'https://shop.test/a', '9': 'https://shop.test/b', '1': 'https://shop.test/' };
    const data = {
      products: [
        { name: 'A', url: 4 },
        { name: 'B', url: 9, image: 77 },
      ],
      home: 1,
    };
    expect(injectUrls(data, paths, urls)).toEqual({
      products: [
        { name: 'A', url: 'https://shop.test/a' },
        { name: 'B', url: 'https://shop.test/b', image: null },
      ],
      home: 'https://shop.test/',
    });
  });
  it('rejects a schema that is not an object', () => {
    expect(() => prepareSchema([] as unknown as Record<string, unknown>)).toThrow(/JSON Schema object/);
    expect(() => preparedSchema([] as unknown as Record<string, unknown>)).toThrow(/JSON Schema object/);
  });
});

describe('prepared extract schemas', () => {
  const wire = (): Record<string, unknown> => ({
    type: 'object',
    properties: { heading: { type: 'string' }, home: { type: 'string', format: 'uri' } },
    required: ['heading'],
  });
  it('prepares a schema sent again (a new object with the same text) once', () => {
    const first = preparedSchema(wire());
    const again = preparedSchema(wire());
    expect(again).toBe(first);
    expect(first.paths).toEqual([['home']]);
    // The reply asks for the link's id; the validator still wants the URL.
    expect(first.reply.safeParse({ data: { heading: 'x', home: 3 }, done: true }).success).toBe(true);
    expect(first.validator.safeParse({ heading: 'x', home: 'https://a.test/' }).success).toBe(true);
    expect(first.validator.safeParse({ heading: 1 }).success).toBe(false);
  });
  it('keeps different schemas apart, zod ones by identity', () => {
    const other = { ...wire(), required: ['heading', 'home'] };
    expect(preparedSchema(other)).not.toBe(preparedSchema(wire()));
    const zodSchema = z.object({ heading: z.string() });
    expect(preparedSchema(zodSchema)).toBe(preparedSchema(zodSchema));
    expect(preparedSchema(zodSchema).validator).toBe(zodSchema);
    expect(preparedSchema(z.object({ heading: z.string() }))).not.toBe(preparedSchema(zodSchema));
  });
  it('lets the least recently used go when a caller sends ever new schemas', () => {
    const numbered = (n: number) => ({ type: 'object', properties: { [`f${n}`]: { type: 'string' } } });
    const oldest = preparedSchema(numbered(-1));
    const kept = preparedSchema(wire());
    for (let n = 0; n < PREPARED_LIMIT + 10; n++) {
      preparedSchema(numbered(n));
      if (n % 50 === 0) preparedSchema(wire()); // in use all along: never the oldest
    }
    expect(preparedSchema(wire())).toBe(kept);
    // Not asked for since: let go, so asking again prepares it anew.
    expect(preparedSchema(numbered(-1))).not.toBe(oldest);
  });
});

describe('variables', () => {
  it('finds placeholders and substitutes only known names', () => {
    expect(placeholders('type %email% then %pass_word%')).toEqual(['email', 'pass_word']);
    expect(substitute(['%email%', '%other%', 'x'], { email: 'ada@x.io' })).toEqual([
      'ada@x.io',
      '%other%',
      'x',
    ]);
  });
});

describe('cache key', () => {
  const base = {
    instruction: 'Click the “Sign in” button.',
    url: 'https://x.test/login?next=/a',
    signature: 's1',
    variableNames: [],
  };
  it('ignores case, quote style and trailing punctuation', () => {
    expect(normalizeInstruction(base.instruction)).toBe('click the sign in button');
    expect(normalizeInstruction("type 'a' into the user's box")).toBe("type a into the user's box");
    expect(cacheKey(base)).toBe(
      cacheKey({ ...base, instruction: 'click the "Sign in" button', url: 'https://x.test/login?next=/b' }),
    );
  });
  it('changes with the page structure and the variable names', () => {
    expect(cacheKey(base)).not.toBe(cacheKey({ ...base, signature: 's2' }));
    expect(cacheKey(base)).not.toBe(cacheKey({ ...base, variableNames: ['email'] }));
  });
  it('keeps what was chosen under a caller’s standing instructions apart, and other keys as they were', () => {
    const guided = cacheKey({ ...base, guidance: 'prefer the SSO button' });
    expect(guided).not.toBe(cacheKey(base));
    expect(guided).not.toBe(cacheKey({ ...base, guidance: 'prefer the password form' }));
    expect(cacheKey({ ...base, guidance: 'prefer the SSO button' })).toBe(guided);
    // A key made before guidance existed is unchanged (saved caches keep hitting).
    expect(cacheKey(base)).toBe('19ac3be3c9f3dc60c954bb064aeccd75');
  });
});

describe('chunkTree', () => {
  it('splits at lines under the budget and repeats the containers above', () => {
    const tree = [
      'main',
      ...Array.from({ length: 40 }, (_, i) => `  listitem: Result number ${i} with some words`),
    ].join('\n');
    const parts = chunkTree(tree, 100);
    expect(parts.length).toBeGreaterThan(3);
    for (const p of parts.slice(1)) expect(p.startsWith('main\n')).toBe(true);
    const items = parts.flatMap((p) => p.split('\n').filter((l) => l.includes('Result')));
    expect(items).toHaveLength(40);
  });
  it('keeps a small tree whole', () => {
    expect(chunkTree('a\nb', 100)).toEqual(['a\nb']);
  });
});

describe('extract system prompt', () => {
  it('speaks of links only when the schema asks for one, and of parts only for a page read in parts', () => {
    const plain = extractSystem({ links: false, parts: false });
    expect(plain).not.toMatch(/link|URL/);
    expect(plain).not.toMatch(/\bdone\b|parts/);
    expect(extractSystem({ links: true, parts: false })).toMatch(/URL/);
    const parted = extractSystem({ links: false, parts: true });
    expect(parted).toMatch(/\bdone\b/);
    expect(parted.startsWith(plain)).toBe(true);
  });
});
