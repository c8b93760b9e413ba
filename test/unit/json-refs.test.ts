import { describe, expect, it } from 'vitest';
import { preparedSchema, prepareSchema } from '../../lib/ops/extract-schema.ts';
import { INLINED_NODE_LIMIT, inlineLocalRefs } from '../../lib/ops/json-refs.ts';

/** The inputs below are what zod-to-json-schema 3.25 (the Stagehand SDK's converter) writes. */
const DRAFT7 = 'http://json-schema.org/draft-07/schema#';
const str = { type: 'string' };
const url = { type: 'string', format: 'uri' };
const item = {
  type: 'object',
  properties: { name: str, url },
  required: ['name', 'url'],
  additionalProperties: false,
};

describe('inlineLocalRefs', () => {
  it('inlines a reused primitive (`const P = z.string(); { min: P, max: P }`)', () => {
    const schema = {
      type: 'object',
      properties: { min: { type: 'string' }, max: { $ref: '#/properties/min' } },
      required: ['min', 'max'],
      additionalProperties: false,
      $schema: DRAFT7,
    };
    const before = structuredClone(schema);
    expect(inlineLocalRefs(schema)).toEqual({ ...schema, properties: { min: str, max: str } });
    // Pure: the caller's schema is not touched.
    expect(schema).toEqual(before);
  });

  it('inlines a reused object inside arrays and as a property', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: 'array', items: item },
        b: { type: 'array', items: { $ref: '#/properties/a/items' } },
        first: { $ref: '#/properties/a/items' },
      },
      required: ['a', 'b', 'first'],
      additionalProperties: false,
      $schema: DRAFT7,
    };
    expect(inlineLocalRefs(schema).properties).toEqual({
      a: { type: 'array', items: item },
      b: { type: 'array', items: item },
      first: item,
    });
  });

  it('resolves a root `$ref` into `definitions`, and refs inside the target (`name` option)', () => {
    const schema = {
      $ref: '#/definitions/Root',
      definitions: {
        Root: {
          type: 'object',
          properties: { a: item, b: { $ref: '#/definitions/Root/properties/a' } },
          required: ['a', 'b'],
          additionalProperties: false,
        },
      },
      $schema: DRAFT7,
    };
    const root = {
      type: 'object',
      properties: { a: item, b: item },
      required: ['a', 'b'],
      additionalProperties: false,
    };
    expect(inlineLocalRefs(schema)).toEqual({ ...root, definitions: { Root: root }, $schema: DRAFT7 });
  });

  it('resolves `#/$defs/…` and refs to refs', () => {
    const schema = {
      type: 'object',
      properties: { x: { $ref: '#/$defs/B' } },
      $defs: { A: { type: 'number' }, B: { $ref: '#/$defs/A' } },
    };
    expect(inlineLocalRefs(schema).properties).toEqual({ x: { type: 'number' } });
  });

  it('unescapes `~1`, `~0` and percent-encoding, `~1` before `~0`', () => {
    const schema = {
      type: 'object',
      properties: {
        'a/b': { type: 'string' },
        'm~n': { type: 'number' },
        'c d': { type: 'boolean' },
        '~1': { type: 'null' },
        p: { $ref: '#/properties/a~1b' },
        q: { $ref: '#/properties/m~0n' },
        r: { $ref: '#/properties/c%20d' },
        s: { $ref: '#/properties/~01' },
      },
    };
    const out = inlineLocalRefs(schema).properties as Record<string, unknown>;
    expect([out.p, out.q, out.r, out.s]).toEqual([
      { type: 'string' },
      { type: 'number' },
      { type: 'boolean' },
      { type: 'null' },
    ]);
  });

  it('resolves array indices in a pointer', () => {
    const schema = {
      anyOf: [{ type: 'string' }, { type: 'object', properties: { again: { $ref: '#/anyOf/0' } } }],
    };
    expect(inlineLocalRefs(schema)).toEqual({
      anyOf: [{ type: 'string' }, { type: 'object', properties: { again: { type: 'string' } } }],
    });
  });

  it('keeps sibling keywords, over the target’s', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: 'string', description: 'the first' },
        b: { $ref: '#/properties/a', description: 'the second' },
      },
    };
    expect(inlineLocalRefs(schema).properties).toEqual({
      a: { type: 'string', description: 'the first' },
      b: { type: 'string', description: 'the second' },
    });
  });

  it('leaves `$ref` keys in instance data and non-local refs alone', () => {
    const schema = {
      type: 'object',
      properties: {
        // A property may be called `default` or `$ref`: the names of `properties` are data.
        default: { type: 'object', default: { $ref: '#/nowhere' }, const: { $ref: '#/nowhere' } },
        remote: { $ref: 'http://127.0.0.1:1/other.json#/x' },
        anchor: { $ref: '#here' },
      },
    };
    expect(inlineLocalRefs(schema)).toEqual(schema);
  });

  it('throws, naming the pointer, for a ref that points nowhere', () => {
    const schema = { type: 'object', properties: { a: { $ref: '#/properties/missing' } } };
    expect(() => inlineLocalRefs(schema)).toThrow(/\$ref #\/properties\/missing points to nothing/);
    // Not down the prototype chain either.
    expect(() => inlineLocalRefs({ properties: { a: { $ref: '#/properties/constructor' } } })).toThrow(
      /points to nothing/,
    );
    expect(() => inlineLocalRefs({ items: { $ref: '#/required' }, required: ['a'] })).toThrow(
      /#\/required does not point to a schema object/,
    );
    expect(() => prepareSchema(schema)).toThrow(
      'schema is not a usable JSON Schema: $ref #/properties/missing points to nothing in the schema',
    );
  });

  it('leaves a recursive ref in place (`#`, an ancestor, A → B → A), and zod still takes `$defs` recursion', () => {
    const ancestor = {
      type: 'object',
      properties: {
        root: {
          type: 'object',
          properties: {
            name: str,
            children: { type: 'array', items: { $ref: '#/properties/root' } },
            up: { $ref: '#' },
          },
        },
      },
    };
    expect(inlineLocalRefs(ancestor)).toEqual(ancestor);

    const mutual = {
      $ref: '#/$defs/A',
      $defs: {
        A: { type: 'object', properties: { b: { $ref: '#/$defs/B' } } },
        B: { type: 'object', properties: { a: { $ref: '#/$defs/A' } } },
      },
    };
    const a = {
      type: 'object',
      properties: { b: { type: 'object', properties: { a: { $ref: '#/$defs/A' } } } },
    };
    expect(inlineLocalRefs(mutual)).toEqual({
      ...a,
      $defs: {
        A: a,
        B: {
          type: 'object',
          properties: { a: { type: 'object', properties: { b: { $ref: '#/$defs/B' } } } },
        },
      },
    });

    const { validator } = prepareSchema(mutual);
    expect(validator.parse({ b: { a: { b: {} } } })).toEqual({ b: { a: { b: {} } } });
    expect(validator.safeParse({ b: { a: { b: 'no' } } }).success).toBe(false);
  });

  it('refuses a schema whose refs multiply past the node limit', () => {
    // Each definition uses the previous one twice: 2^20 copies of D0 once inlined.
    const definitions: Record<string, unknown> = { D0: { type: 'string' } };
    for (let i = 1; i <= 20; i++)
      definitions[`D${i}`] = {
        type: 'object',
        properties: { x: { $ref: `#/definitions/D${i - 1}` }, y: { $ref: `#/definitions/D${i - 1}` } },
      };
    expect(() => inlineLocalRefs({ $ref: '#/definitions/D20', definitions })).toThrow(
      `more than ${INLINED_NODE_LIMIT} nodes`,
    );
  });

  it('counts every value it copies: a long list behind a ref used many times is refused too', () => {
    const big = { type: 'string', enum: Array.from({ length: 1000 }, (_, i) => `v${i}`) };
    const properties = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`f${i}`, { $ref: '#/definitions/Big' }]),
    );
    expect(() => inlineLocalRefs({ type: 'object', properties, definitions: { Big: big } })).toThrow(
      `more than ${INLINED_NODE_LIMIT} nodes`,
    );
    // The same list used a few times is fine.
    const few = {
      type: 'object',
      properties: { a: { $ref: '#/definitions/Big' } },
      definitions: { Big: big },
    };
    const inlined = inlineLocalRefs(few).properties as { a: { enum: string[] } };
    expect(inlined.a.enum).toHaveLength(1000);
  });

  it('never lets a __proto__ key set the copy’s prototype', () => {
    const hostile = JSON.parse(
      '{"type":"object","__proto__":{"required":["x"]},"properties":{"__proto__":{"type":"string"},"a":{"$ref":"#/properties/a2"},"a2":{"type":"string"}}}',
    ) as Record<string, unknown>;
    const out = inlineLocalRefs(hostile);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect((out as { required?: unknown }).required).toBeUndefined();
    expect(Object.keys(out.properties as object)).toEqual(['a', 'a2']);
  });
});

describe('extract schemas with $refs', () => {
  it('finds a URL field behind a `$ref` and validates the reused fields', () => {
    const schema = {
      type: 'object',
      properties: {
        main: item,
        others: { type: 'array', items: { $ref: '#/properties/main' } },
        home: { $ref: '#/properties/main/properties/url' },
        low: { type: 'string' },
        high: { $ref: '#/properties/low' },
      },
      required: ['main', 'others', 'home', 'low', 'high'],
      additionalProperties: false,
      $schema: DRAFT7,
    };
    const prepared = preparedSchema(schema);
    expect(prepared.paths).toEqual([['main', 'url'], ['others', '*', 'url'], ['home']]);
    const data = {
      main: { name: 'A', url: 'https://shop.test/a' },
      others: [{ name: 'B', url: 'https://shop.test/b' }],
      home: 'https://shop.test/',
      low: '$1',
      high: '$9',
    };
    expect(prepared.validator.parse(data)).toEqual(data);
    expect(prepared.validator.safeParse({ ...data, high: 9 }).success).toBe(false);
    // The model is asked for link ids behind the ref too.
    const asked = { ...data, main: { name: 'A', url: 1 }, others: [{ name: 'B', url: 2 }], home: 3 };
    expect(prepared.reply.safeParse({ data: asked, done: true }).success).toBe(true);
    expect(prepared.reply.safeParse({ data, done: true }).success).toBe(false);
  });
});
