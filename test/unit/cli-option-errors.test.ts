/** Issue 28 item 3: an option error is one line that names the option, with balanced quotes. */
import { describe, expect, it } from 'vitest';
import { parse, UsageError, varFlags } from '../../lib/cli/args.ts';

const options = { limit: { type: 'string' as const }, verbose: { type: 'boolean' as const } };
const problem = (argv: string[]): string => {
  try {
    parse(argv, options);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`no error for ${argv.join(' ')}`);
};
const balanced = (s: string) =>
  (s.match(/"/g) ?? []).length % 2 === 0 && (s.match(/'/g) ?? []).length % 2 === 0;

describe('option errors', () => {
  it('an unknown option is named, on one line, with its quotes closed', () => {
    for (const flag of ['--frobnicate', '-z']) {
      const msg = problem([flag]);
      expect(msg).toMatch(new RegExp(`^unknown option ${flag} `));
      expect(msg).not.toContain('\n');
      expect(balanced(msg)).toBe(true);
    }
  });

  it('a missing value names the option', () => {
    expect(problem(['--limit'])).toMatch(/^--limit needs a value/);
    const ambiguous = problem(['--limit', '--verbose']);
    expect(ambiguous).toMatch(/^--limit needs a value/);
    expect(ambiguous).not.toContain('\n');
  });

  it('a value given to a switch is refused by name', () => {
    expect(problem(['--verbose=yes'])).toBe('--verbose takes no value');
  });

  it('good options still parse', () => {
    expect(parse(['--limit', '3', '--verbose', 'x'], options)).toEqual({
      flags: { limit: '3', verbose: true },
      positionals: ['x'],
    });
  });

  it('--var takes name=value (the value may hold "="); a bad one is named without echoing its value', () => {
    const flags = parse(['--var', 'pw=a=b', '--var', 'user=me'], {
      var: { type: 'string', multiple: true },
    }).flags;
    expect(varFlags(flags)).toEqual({ pw: 'a=b', user: 'me' });
    expect(varFlags({})).toBeUndefined();
    let msg = '';
    try {
      varFlags({ var: ['=s3cret'] });
    } catch (err) {
      expect(err).toBeInstanceOf(UsageError);
      msg = (err as Error).message;
    }
    expect(msg).toMatch(/^--var expects name=value/);
    expect(msg).not.toContain('s3cret');
  });
});
