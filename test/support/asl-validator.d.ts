// asl-validator ships no types; this is the part the tests call.
declare module 'asl-validator' {
  export default function validator(
    definition: Record<string, unknown>,
    options?: { checkPaths?: boolean; checkArn?: boolean },
  ): { isValid: boolean; errors: { message?: string; [k: string]: unknown }[] };
}
