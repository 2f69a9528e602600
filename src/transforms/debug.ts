/**
 * debug.print (JAX's jax.debug.print): prints values from inside jit, vmap, grad and scan at run
 * time, not at trace time. It is a primitive with an effect: tracing keeps it though nothing reads
 * it, and a program containing it is interpreted op by op (debugging, not production speed), so
 * prints come in program order. Under grad the primal values print once (on the forward pass);
 * under vmap each batch element prints on its own line, as in JAX.
 */
import type { Array } from "../core/array.js";
import { ConcreteArray } from "../core/concrete.js";
import { definePrimitive, type Primitive } from "../core/primitive.js";
import { reshape, sliceAxis } from "../core/prims/index.js";
import { bind } from "../core/trace.js";
import { flatten, unflatten, type TreeDef } from "../core/tree.js";
import { leafToArray } from "./api-util.js";

interface PrintParams {
  readonly format: string;
  /** Rebuilds [positional args, named args] from the operands. */
  readonly treedef: TreeDef;
  readonly sink: (line: string) => void;
}

/** Asynchronous reads (WebGPU) print in program order: each waits for the one before. */
let pending: Promise<void> = Promise.resolve();

export const debugPrintP: Primitive<PrintParams> = definePrimitive<PrintParams>({
  name: "debug_print",
  effect: true,
  shape: () => [],
  evaluate: (args, p) => {
    const emit = (values: (number[] | number | boolean[] | boolean)[]) => {
      const [pos, named] = unflatten(
        p.treedef,
        values.map((v, i) => ({ value: v, shape: args[i]!.shape })),
      ) as [unknown[], Record<string, unknown>];
      p.sink(formatLine(p.format, pos, named));
    };
    const sync = args.every((a) => a instanceof ConcreteArray && a.backend.name === "cpu");
    if (sync) emit(args.map((a) => readList(a.dataSync(), a.dtype)));
    else {
      pending = pending
        .then(async () => emit(await Promise.all(args.map(async (a) => readList(await a.data(), a.dtype)))))
        .catch((e) => p.sink(`debug.print failed: ${(e as Error).message}`));
    }
    return [];
  },
  jvp: (primals, _t, p) => {
    bind(debugPrintP, primals, p);
    return [[], []];
  },
  vmap: (args, dims, p, n) => {
    for (let i = 0; i < n; i++) {
      bind(
        debugPrintP,
        args.map((a, k) => {
          const d = dims[k];
          return d === null || d === undefined
            ? a
            : reshape(
                sliceAxis(a, d, i, i + 1),
                a.shape.filter((_, j) => j !== d),
              );
        }),
        p,
      );
    }
    return [[], []];
  },
  printParams: (p) => JSON.stringify(p.format),
});

const readList = (data: ArrayLike<number>, dtype: string): number[] | boolean[] =>
  dtype === "bool" ? globalThis.Array.from(data, (v) => v !== 0) : globalThis.Array.from(data);

interface Leaf {
  readonly value: number[] | boolean[];
  readonly shape: readonly number[];
}
const isLeaf = (v: unknown): v is Leaf => typeof v === "object" && v !== null && "shape" in v && "value" in v;

/** A number under a format spec: `.3f`, `.2e`, `.4g` (Python's), or JS's shortest form. */
function fmtNumber(v: number | boolean, spec: string): string {
  if (typeof v === "boolean") return String(v);
  const m = /^\.(\d+)([fegFEG%]?)$/.exec(spec);
  if (!spec || !m) return String(v);
  const digits = Number(m[1]);
  switch (m[2]!.toLowerCase()) {
    case "f":
      return v.toFixed(digits);
    case "e":
      return v.toExponential(digits);
    case "%":
      return `${(v * 100).toFixed(digits)}%`;
    default:
      return v.toPrecision(Math.max(digits, 1));
  }
}
/** An array leaf as nested lists (numpy-like brackets, comma separated). */
function fmtLeaf(l: Leaf, spec: string): string {
  const vals = l.value as (number | boolean)[];
  if (l.shape.length === 0) return fmtNumber(vals[0]!, spec);
  let k = 0;
  const rec = (d: number): string => {
    const items = globalThis.Array.from({ length: l.shape[d]! }, () =>
      d === l.shape.length - 1 ? fmtNumber(vals[k++]!, spec) : rec(d + 1),
    );
    return `[${items.join(", ")}]`;
  };
  return rec(0);
}
function fmtValue(v: unknown, spec: string): string {
  if (isLeaf(v)) return fmtLeaf(v, spec);
  if (v === null || v === undefined) return String(v);
  if (globalThis.Array.isArray(v)) return `[${v.map((x) => fmtValue(x, spec)).join(", ")}]`;
  if (typeof v === "object")
    return `{ ${Object.entries(v)
      .map(([k, x]) => `${k}: ${fmtValue(x, spec)}`)
      .join(", ")} }`;
  return String(v);
}

/** Python's str.format subset: `{}`, `{0}`, `{name}`, each with an optional `:spec`; `{{` and `}}` are braces. */
export function formatLine(
  format: string,
  positional: readonly unknown[],
  named: Readonly<Record<string, unknown>>,
  render: (v: unknown, spec: string) => string = fmtValue,
): string {
  let auto = 0;
  return format.replace(
    /\{\{|\}\}|\{([^{}:]*)(?::([^{}]*))?\}/g,
    (m, field: string | undefined, spec: string | undefined) => {
      if (m === "{{") return "{";
      if (m === "}}") return "}";
      const f = (field ?? "").trim();
      let v: unknown;
      if (f === "") {
        if (auto >= positional.length)
          throw new Error(
            `debug.print: "${format}" has more {} fields than the ${positional.length} positional argument(s).`,
          );
        v = positional[auto++];
      } else if (/^\d+$/.test(f)) {
        const i = Number(f);
        if (i >= positional.length)
          throw new Error(
            `debug.print: field {${f}} of "${format}" has no positional argument (${positional.length} given).`,
          );
        v = positional[i];
      } else {
        if (!(f in named))
          throw new Error(
            `debug.print: field {${f}} of "${format}" is not among the named arguments ` +
              `(${Object.keys(named).join(", ") || "none"}); ` +
              `pass them as a last object: debug.print("${f} = {${f}}", { ${f} }).`,
          );
        v = named[f];
      }
      return render(v, spec ?? "");
    },
  );
}

const namedFields = (format: string): string[] =>
  [...format.replace(/\{\{|\}\}/g, "").matchAll(/\{([^{}:]*)(?::[^{}]*)?\}/g)]
    .map((m) => m[1]!.trim())
    .filter((f) => f !== "" && !/^\d+$/.test(f));

let sink: (line: string) => void = (line) => console.log(line);

/**
 * Prints `format` with values filled in when the code runs — inside jit, vmap, grad, scan too
 * (JAX's jax.debug.print). Fields: `{}` and `{0}` take positional arguments, `{name}` a key of a
 * last plain-object argument; a `:spec` such as `{x:.3f}` formats numbers (f, e, g, %).
 * Arguments are pytrees of Arrays and numbers. `debug.print("step {i}: loss = {loss:.4e}", { i, loss })`.
 * A jitted function that prints runs op by op (no fusion): for debugging.
 */
function print(format: string, ...args: unknown[]): void {
  if (typeof format !== "string")
    throw new Error(`debug.print: the first argument is the format string, got ${typeof format}.`);
  const names = namedFields(format);
  let positional = args,
    named: Record<string, unknown> = {};
  if (names.length) {
    const last = args[args.length - 1];
    if (
      typeof last !== "object" ||
      last === null ||
      globalThis.Array.isArray(last) ||
      last instanceof ConcreteArray ||
      "aval" in (last as object)
    ) {
      throw new Error(
        `debug.print: "${format}" names {${names.join("}, {")}}: ` +
          `pass them as a last object, e.g. debug.print("${names[0]} = {${names[0]}}", { ${names[0]} }).`,
      );
    }
    positional = args.slice(0, -1);
    named = last as Record<string, unknown>;
  }
  // Check the fields now (at trace time), with the structure only.
  formatLine(format, positional, named, () => "");
  const [leaves, treedef] = flatten([positional, named]);
  const ops: Array[] = leaves.map((l) => leafToArray(l, "debug.print"));
  bind(debugPrintP, ops, { format, treedef, sink: (line: string) => sink(line) });
}

/**
 * Where debug.print's lines go (console.log by default); returns the previous sink. For tests
 * and for loggers: `const prev = debug.setPrintSink((l) => lines.push(l))`.
 */
function setPrintSink(f: (line: string) => void): (line: string) => void {
  const prev = sink;
  sink = f;
  return prev;
}

/** Waits until every debug.print of WebGPU values so far has printed (their reads are asynchronous). */
const flush = (): Promise<void> => pending;

/** JAX's jax.debug: print (values at run time from traced code), setPrintSink, flush. */
export const debug = { print, setPrintSink, flush };
