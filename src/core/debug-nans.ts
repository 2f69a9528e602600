/**
 * Debug-NaN mode, in the spirit of JAX's jax_debug_nans: while on, every primitive evaluated on
 * the CPU checks its float outputs; the first one that turns finite inputs into a NaN or an
 * infinity raises an error naming it, its shapes and the user's call site where the stack shows
 * one. A jitted function (compiled as a whole) whose output is not finite is re-run op by op, so
 * the error names the primitive inside it — for forward values and for gradients alike (reverse
 * mode's adjoint programs are jitted functions too). Off by default: it reads every result.
 *
 *   setDebugNans(true);  jit(f)(x);   // Error: debug NaNs: log produced -Infinity …
 * Also switched on by the environment variable GRADSIM_DEBUG_NANS=1.
 */
import type { Array } from "./array.js";
import { ConcreteArray } from "./concrete.js";
import { evalIR, type IR } from "./ir.js";
import type { Primitive } from "./primitive.js";
import { setPrimitiveChecker } from "./trace.js";

const envOn =
  typeof process !== "undefined" &&
  (process as { env?: Record<string, string | undefined> }).env?.GRADSIM_DEBUG_NANS === "1";
let enabled = false;

export class DebugNanError extends Error {
  constructor(
    message: string,
    readonly primitive: string,
  ) {
    super(message);
    this.name = "DebugNanError";
  }
}

/** Host values of a concrete CPU float array, else null (GPU arrays are read asynchronously: not checked). */
const hostFloats = (a: Array): ArrayLike<number> | null =>
  a instanceof ConcreteArray && a.backend.name === "cpu" && a.dtype.startsWith("float") ? a.dataSync() : null;

const firstBad = (d: ArrayLike<number>): number => {
  for (let i = 0; i < d.length; i++) if (!Number.isFinite(d[i]!)) return i;
  return -1;
};

/** The first stack frame outside gradsim's core and transforms: where the user called in. */
function callSite(): string | null {
  const lines = (new Error().stack ?? "")
    .split("\n")
    .slice(1)
    .map((l) => l.trim());
  const user = lines.find(
    (l) =>
      l.startsWith("at ") && !/[/\\]src[/\\](core|transforms|optim)[/\\]|node_modules|node:internal|\(node:/.test(l),
  );
  return user ? user.slice(3) : null;
}

const jitNames: string[] = [];

function check(prim: Primitive, args: readonly Array[], outs: readonly Array[], params: unknown): void {
  const inputsFinite = args.every((a) => {
    const d = hostFloats(a);
    return !d || firstBad(d) < 0;
  });
  if (!inputsFinite) return;
  for (const [k, out] of outs.entries()) {
    const d = hostFloats(out);
    const i = d ? firstBad(d) : -1;
    if (i < 0) continue;
    const p = params as { ir?: IR; name?: string };
    if (prim.name === "jit_call" && p.ir) {
      // Compiled as a whole: run its equations one by one to find the primitive (this check then throws).
      jitNames.push(p.name ?? "fn");
      try {
        evalIR(p.ir, [], args);
      } finally {
        jitNames.pop();
      }
    }
    const site = callSite();
    const within = jitNames.length ? ` inside jit(${jitNames.join(" → ")})` : "";
    throw new DebugNanError(
      `debug NaNs: ${prim.name} produced ${d![i]} from finite ` +
        `inputs${within} — output ${k} ${out.aval} at flat index ${i}; ` +
        `inputs ${args.map((a) => String(a.aval)).join(", ") || "none"}` +
        (site ? `; called at ${site}` : "") +
        ". Turn the mode off with setDebugNans(false).",
      prim.name,
    );
  }
}

/** Switch debug-NaN mode on or off; returns the previous setting. */
export function setDebugNans(on: boolean): boolean {
  const prev = enabled;
  enabled = on;
  setPrimitiveChecker(on ? check : null);
  return prev;
}

export const debugNansEnabled = (): boolean => enabled;

if (envOn) setDebugNans(true);
