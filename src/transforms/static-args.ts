/**
 * jit's static arguments: by position (`staticArgnums`) and by name (`staticArgnames`). A name
 * is either one of the function's parameters (read from its source, as JAX reads the signature)
 * or a key of a plain-object argument — JavaScript's keyword arguments: `f(x, { steps: 10 })`.
 * Static values are not traced: they are part of the cache key (numbers, strings, booleans by
 * value; objects and functions by identity) and reach the function as they are.
 */

/** The split of one call's arguments into the traced part and the static part. */
export interface StaticSplit {
  /** The arguments with static positions and static object keys removed (what is traced). */
  readonly dynamic: unknown[];
  /** The static values' part of the cache key. */
  readonly key: string;
  /** The full argument list again, from (traced stand-ins of) the dynamic arguments. */
  rebuild(dynamic: readonly unknown[]): unknown[];
}

export interface StaticSpec {
  readonly nums: ReadonlySet<number>;
  /** Names that are not parameters of f: keys of plain-object arguments. */
  readonly keys: readonly string[];
  readonly params: readonly (string | null)[];
}

/**
 * Parameter names of f from its source: simple identifiers (with or without a default); null
 * for a destructured or rest parameter; [] when the source cannot be read (native, bound).
 */
export function parameterNames(f: (...args: any[]) => unknown): (string | null)[] {
  let src: string;
  try {
    src = Function.prototype.toString.call(f);
  } catch {
    return [];
  }
  if (/\{\s*\[native code\]\s*\}\s*$/.test(src)) return [];
  src = src
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/\/\/[^\n]*/g, "")
    .trim();
  const bare = /^(?:async\s+)?([A-Za-z_$][\w$]*)\s*=>/.exec(src);
  if (bare) return [bare[1]!];
  const open = src.indexOf("(");
  if (open < 0) return [];
  // The parameter list: up to the matching parenthesis, splitting at top-level commas.
  const params: string[] = [];
  let depth = 0,
    start = open + 1,
    quote = "";
  for (let i = open; i < src.length; i++) {
    const c = src[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = "";
      continue;
    }
    if (c === "'" || c === '"' || c === "`") quote = c;
    else if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") {
      if (--depth === 0) {
        params.push(src.slice(start, i));
        break;
      }
    } else if (c === "," && depth === 1) {
      params.push(src.slice(start, i));
      start = i + 1;
    }
  }
  return params
    .map((p) => p.trim())
    .filter((p) => p !== "")
    .map((p) => /^([A-Za-z_$][\w$]*)\s*(?:=|$)/.exec(p)?.[1] ?? null);
}

/** Resolves staticArgnums and staticArgnames against f once, at jit time. */
export function staticSpec(
  f: (...args: any[]) => unknown,
  nums: readonly number[] = [],
  names: readonly string[] = [],
  what = "jit",
): StaticSpec {
  for (const n of nums) {
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`${what}: staticArgnums must hold non-negative integers, got ${n}.`);
  }
  const params = names.length ? parameterNames(f) : [];
  const all = new Set(nums);
  const keys: string[] = [];
  for (const name of names) {
    if (typeof name !== "string" || name === "")
      throw new Error(
        `${what}: staticArgnames must hold parameter or option names (strings), got ${JSON.stringify(name)}.`,
      );
    const i = params.indexOf(name);
    if (i >= 0) all.add(i);
    else keys.push(name);
  }
  return { nums: all, keys, params };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" &&
  v !== null &&
  (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);

const staticIds = new WeakMap<object, number>();
let nextStaticId = 0;
/** A static value's cache key: primitives by value, objects and functions by identity. */
export function staticKey(v: unknown): string {
  if (v === null || ["number", "string", "boolean", "undefined"].includes(typeof v))
    return JSON.stringify(v) ?? "undefined";
  if (typeof v === "object" || typeof v === "function") {
    let id = staticIds.get(v as object);
    if (id === undefined) staticIds.set(v as object, (id = nextStaticId++));
    return `#${id}`;
  }
  return String(v);
}

/** Splits one call's arguments (a clear error for a static name that the call does not carry). */
export function splitStatics(spec: StaticSpec, args: readonly unknown[], fname: string, what = "jit"): StaticSplit {
  const dynIdx: number[] = [];
  const dynamic: unknown[] = [];
  const keyParts: string[] = [];
  // Static object keys: which argument each was taken from.
  const taken: { arg: number; key: string; value: unknown }[] = [];
  for (const name of spec.keys) {
    const holders = args.flatMap((a, i) =>
      !spec.nums.has(i) && isPlainObject(a) && Object.hasOwn(a, name) ? [i] : [],
    );
    if (!holders.length) {
      const shown = spec.params.length
        ? `(${spec.params.map((p) => p ?? "{…}").join(", ")})`
        : "(parameters not readable from its source)";
      const keys = [...new Set(args.flatMap((a) => (isPlainObject(a) ? Object.keys(a) : [])))];
      throw new Error(
        `${what}: staticArgnames names "${name}", but ${fname}${shown} ` +
          `has no parameter "${name}" ` +
          `and no object argument of this call has a "${name}" key` +
          `${keys.length ? ` (its object arguments' keys: ${keys.join(", ")})` : ""}` +
          `. Pass it (e.g. f(x, { ${name}: … })) or fix the name.`,
      );
    }
    for (const i of holders) taken.push({ arg: i, key: name, value: (args[i] as Record<string, unknown>)[name] });
  }
  args.forEach((a, i) => {
    if (spec.nums.has(i)) {
      keyParts.push(`${i}=${staticKey(a)}`);
      return;
    }
    const mine = taken.filter((t) => t.arg === i);
    dynIdx.push(i);
    if (!mine.length) {
      dynamic.push(a);
      return;
    }
    const rest = { ...(a as Record<string, unknown>) };
    for (const t of mine) {
      delete rest[t.key];
      keyParts.push(`${i}.${t.key}=${staticKey(t.value)}`);
    }
    dynamic.push(rest);
  });
  return {
    dynamic,
    key: `${args.length}|${keyParts.join(",")}`,
    rebuild: (d) => {
      const full = [...args];
      dynIdx.forEach((i, k) => {
        const mine = taken.filter((t) => t.arg === i);
        full[i] = mine.length
          ? { ...(d[k] as Record<string, unknown>), ...Object.fromEntries(mine.map((t) => [t.key, t.value])) }
          : d[k];
      });
      return full;
    },
  };
}
