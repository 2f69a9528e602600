/**
 * The unknowns of a system-identification problem: named physical parameters (scalars or
 * vectors), each with a transform to the unconstrained space the optimisers work in, a unit and
 * a prior range. A `Layout` packs them into one flat float32 vector u and maps it back to named
 * physical Arrays with differentiable array ops, so any optimiser, Jacobian or vmap sees a
 * plain vector while the simulator sees named parameters.
 *
 *   log       x = exp(u): positive scale parameters (mass, stiffness); steps are relative changes
 *   identity  x = u: signed quantities (velocities, angles)
 *   box       x = lo + (hi − lo)·sigmoid(u): bounded ones (a friction coefficient in [0, 2])
 */
import type { Array } from "../core/array.js";
import type { Rng } from "../core/host-rng.js";
import { sigmoid } from "../core/nn.js";
import { np } from "../core/np/index.js";

export type Transform = "log" | "identity" | { readonly box: readonly [number, number] };

/** One unknown; N is its name's literal type, so a simulator's `params.mass` is checked by `tsc`. */
export interface Unknown<N extends string = string> {
  readonly name: N;
  /** Scalars in this unknown: absent for a scalar (shape []), n for a vector (shape [n]). */
  readonly size?: number;
  /** Default "identity". */
  readonly transform?: Transform;
  /** Unit of the physical value, for reports (e.g. "kg", "N/m", "m/s"). */
  readonly unit?: string;
  /** Uniform prior range of each scalar: what restarts, curricula and the "random" baseline draw from. */
  readonly prior?: readonly [number, number];
}

/** Host values of unknowns by name: a number for a scalar unknown, an array for a vector one. */
export type Value = number | readonly number[];
export type Values<N extends string = string> = Readonly<Record<N, Value>>;
/**
 * Physical parameters as Arrays by name (shape [] or [size]): what a simulator receives. With the
 * unknowns' names as N, reading a name that is not an unknown is a type error; without them (or
 * from JavaScript), reading it throws an error that lists the unknowns.
 */
export type Params<N extends string = string> = Record<N, Array>;

/**
 * Params that note the names a simulator reads which are not unknowns. Reading one is not an
 * error by itself (simulators probe optional parameters: `p.ke ?? defaultKe`), but when the
 * simulation then fails, `Layout.explainMisreads` names them: a misspelt `params.sped` would
 * otherwise surface as "mul: … got undefined" deep in the math.
 */
function recordingParams(params: Params, misreads: Set<string>): Params {
  return new Proxy(params, {
    get(target, key, receiver) {
      if (typeof key === "string" && !(key in target)) misreads.add(key);
      return Reflect.get(target, key, receiver);
    },
  });
}

const isBox = (t: Transform): t is { readonly box: readonly [number, number] } => typeof t === "object";

/** Forward map of one transform, elementwise on host numbers. */
function forwardHost(t: Transform, u: number): number {
  if (t === "log") return Math.exp(u);
  if (t === "identity") return u;
  const [lo, hi] = t.box;
  return lo + (hi - lo) / (1 + Math.exp(-u));
}

/** The unknowns' layout in u; N is their names (literal types when written as literals). */
export class Layout<N extends string = string> {
  readonly unknowns: readonly Unknown<N>[];
  /** Total number of scalars (the length of u). */
  readonly size: number;
  private readonly offsets: number[];
  /** Names read from params() that are not unknowns, since the last explainMisreads. */
  private readonly misreads = new Set<string>();

  constructor(unknowns: readonly Unknown<N>[]) {
    if (!unknowns.length)
      throw new Error(
        'sysid: no unknowns given; name at least one parameter to estimate, e.g. { name: "mass", transform: "log" }.',
      );
    const seen = new Set<string>();
    for (const k of unknowns) {
      if (typeof k.name !== "string" || !k.name)
        throw new Error(`sysid: every unknown needs a name, got ${JSON.stringify(k)}.`);
      if (seen.has(k.name)) throw new Error(`sysid: the unknown "${k.name}" is listed twice.`);
      seen.add(k.name);
      if (k.size !== undefined && !(Number.isInteger(k.size) && k.size >= 1))
        throw new Error(
          `sysid: unknown "${k.name}" has size ${k.size}; use a positive integer (or leave it out for a scalar).`,
        );
      const t = k.transform ?? "identity";
      if (isBox(t) && !(Number.isFinite(t.box[0]) && Number.isFinite(t.box[1]) && t.box[1] > t.box[0])) {
        throw new Error(`sysid: unknown "${k.name}" has box [${t.box}]; a box needs finite lo < hi.`);
      }
      if (t !== "log" && t !== "identity" && !isBox(t))
        throw new Error(
          `sysid: unknown "${k.name}" has transform ${JSON.stringify(t)}; use "log", "identity" or { box: [lo, hi] }.`,
        );
      if (k.prior) this.checkPrior(k);
    }
    this.unknowns = unknowns;
    this.offsets = [];
    let n = 0;
    for (const k of unknowns) {
      this.offsets.push(n);
      n += k.size ?? 1;
    }
    this.size = n;
  }

  private checkPrior(k: Unknown): void {
    const [lo, hi] = k.prior!;
    if (!(Number.isFinite(lo) && Number.isFinite(hi) && hi >= lo))
      throw new Error(`sysid: unknown "${k.name}" has prior [${k.prior}]; a prior range needs finite lo ≤ hi.`);
    const t = k.transform ?? "identity";
    if (t === "log" && !(lo > 0))
      throw new Error(
        `sysid: unknown "${k.name}" is positive (log transform) but its ` +
          `prior [${lo}, ${hi}] reaches ${lo}; give a range of positive values.`,
      );
    if (isBox(t) && !(lo > t.box[0] && hi < t.box[1]))
      throw new Error(
        `sysid: unknown "${k.name}" has prior [${lo}, ${hi}] outside its box (${t.box[0]}, ${t.box[1]}).`,
      );
  }

  get names(): N[] {
    return this.unknowns.map((k) => k.name);
  }

  /** The unconstrained vector u (host numbers) for physical values; every unknown must be present and valid. */
  toU(values: Values, what = "values"): number[] {
    const u: number[] = [];
    for (const k of this.unknowns) {
      const scalars = this.scalarsOf(values, k, what);
      const t = k.transform ?? "identity";
      for (const x of scalars) {
        if (t === "log") {
          if (!(x > 0))
            throw new Error(
              `sysid: ${what}: "${k.name}" is ${x}, but it must be positive (it is estimated in log space).`,
            );
          u.push(Math.log(x));
        } else if (t === "identity") u.push(x);
        else {
          const [lo, hi] = t.box;
          if (!(x > lo && x < hi))
            throw new Error(`sysid: ${what}: "${k.name}" is ${x}, outside its box (${lo}, ${hi}).`);
          const f = (x - lo) / (hi - lo);
          u.push(Math.log(f) - Math.log1p(-f));
        }
      }
    }
    return u;
  }

  /** Physical values (host) from u. */
  fromU(u: ArrayLike<number>): Values {
    if (u.length !== this.size) throw new Error(`sysid: expected ${this.size} unconstrained values, got ${u.length}.`);
    const out: Record<string, Value> = {};
    this.unknowns.forEach((k, i) => {
      const t = k.transform ?? "identity",
        o = this.offsets[i]!;
      const xs = globalThis.Array.from({ length: k.size ?? 1 }, (_, j) => forwardHost(t, Number(u[o + j])));
      out[k.name] = k.size === undefined ? xs[0]! : xs;
    });
    return out;
  }

  /** Physical parameters as Arrays from u [size] (differentiable; u's dtype is kept). */
  params(u: Array): Params<N> {
    if (u.ndim !== 1 || u.shape[0] !== this.size)
      throw new Error(`sysid: the unconstrained vector must have shape [${this.size}], got [${u.shape}].`);
    const pieces = this.unknowns.length === 1 ? [u] : np.split(u, this.offsets.slice(1), 0);
    const out: Params = {};
    this.unknowns.forEach((k, i) => {
      const t = k.transform ?? "identity";
      const piece = pieces[i]!;
      let x: Array =
        t === "log"
          ? np.exp(piece)
          : t === "identity"
            ? piece
            : np.add(t.box[0], np.mul(t.box[1] - t.box[0], sigmoid(piece)));
      if (k.size === undefined) x = np.reshape(x, []);
      out[k.name] = x;
    });
    return recordingParams(out, this.misreads) as Params<N>;
  }

  /**
   * Run f (a simulation of params from this layout); if it throws after reading names that are
   * not unknowns, the error says so and lists the unknowns.
   */
  explainMisreads<T>(f: () => T): T {
    this.misreads.clear();
    try {
      return f();
    } catch (e) {
      const names = [...this.misreads];
      if (!names.length || !(e instanceof Error)) throw e;
      throw new Error(
        `${e.message}\nsysid: the simulator read ${names.map((n) => `params.${n}`).join(", ")}, ` +
          `but ${names.length > 1 ? "these are not unknowns" : `"${names[0]}" is not an unknown`} ` +
          `(unknowns: ${this.names.join(", ")}); check the spelling, or add it to unknowns.`,
        { cause: e },
      );
    } finally {
      this.misreads.clear();
    }
  }

  /** Flat physical scalars in layout order (for error metrics). */
  flat(values: Values, what = "values"): number[] {
    return this.unknowns.flatMap((k) => this.scalarsOf(values, k, what));
  }

  /**
   * n starting points spread over the priors (a Latin hypercube: each scalar's prior cut into n strata, one draw in
   * each, the strata paired at random), uniform per scalar in its estimation space — log-uniform for "log" unknowns,
   * as the scan spaces them. Independent uniform draws left a video fit's light, slippery corner of a mass × μ prior
   * empty: 8 draws uniform in [0.75, 12] kg fall below 2 kg with probability 8% each.
   */
  drawStarts(rng: Rng, n: number): Values[] {
    const out: Record<string, Value>[] = globalThis.Array.from({ length: n }, () => ({}));
    for (const k of this.unknowns) {
      if (!k.prior)
        throw new Error(`sysid: unknown "${k.name}" has no prior range; restarts draw from it (give prior: [lo, hi]).`);
      const [lo, hi] = k.prior;
      const at = (f: number) => (k.transform === "log" ? lo * (hi / lo) ** f : lo + (hi - lo) * f);
      const columns = globalThis.Array.from({ length: k.size ?? 1 }, () =>
        rng.shuffle(globalThis.Array.from({ length: n }, (_, i) => at((i + rng.uniform(0, 1)) / n))),
      );
      out.forEach((o, i) => (o[k.name] = k.size === undefined ? columns[0]![i]! : columns.map((c) => c[i]!)));
    }
    return out;
  }

  /** Indices into u of each unknown's scalars. */
  indicesOf(name: string): number[] {
    const i = this.unknowns.findIndex((k) => k.name === name);
    if (i < 0) throw new Error(`sysid: no unknown named "${name}" (unknowns: ${this.names.join(", ")}).`);
    return globalThis.Array.from({ length: this.unknowns[i]!.size ?? 1 }, (_, j) => this.offsets[i]! + j);
  }

  private scalarsOf(values: Values, k: Unknown, what: string): number[] {
    const v = values[k.name];
    if (v === undefined)
      throw new Error(
        `sysid: ${what} has no value for the unknown "${k.name}" (it has ${Object.keys(values).join(", ") || "none"}).`,
      );
    const xs = typeof v === "number" ? [v] : [...v];
    const n = k.size ?? 1;
    if (xs.length !== n || (k.size !== undefined && typeof v === "number")) {
      throw new Error(
        `sysid: ${what}: "${k.name}" ` +
          `needs ${k.size === undefined ? "a number" : `${n} numbers`}, got ${JSON.stringify(v)}.`,
      );
    }
    const bad = xs.findIndex((x) => typeof x !== "number" || !Number.isFinite(x));
    if (bad >= 0)
      throw new Error(
        `sysid: ${what}: "${k.name}"${n > 1 ? `[${bad}]` : ""} is ${xs[bad]}; every value must be a finite number.`,
      );
    return xs;
  }
}

/** Human-readable values, e.g. "mass 2.500 kg, mu 0.6000". Vectors are summarised by their range. */
export function formatValues(layout: Layout, v: Values): string {
  return layout.unknowns
    .map((k) => {
      const x = v[k.name];
      if (x === undefined) return `${k.name} ?`;
      const unit = k.unit ? ` ${k.unit}` : "";
      if (typeof x === "number") return `${k.name} ${x.toPrecision(4)}${unit}`;
      return (
        `${k.name} [${x.length} values ` +
        `in ${Math.min(...x).toPrecision(3)}…${Math.max(...x).toPrecision(3)}]${unit}`
      );
    })
    .join(", ");
}
