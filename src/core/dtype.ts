/** Element types. float32 is the default; float64 exists on the CPU backend (for gradient checks). */
export type DType = "float32" | "float64" | "int32" | "bool";

export const DTYPES: readonly DType[] = ["bool", "int32", "float32", "float64"];

export type TypedArray = Float32Array | Float64Array | Int32Array | Uint8Array;

export const isFloat = (d: DType): boolean => d === "float32" || d === "float64";
export const isInt = (d: DType): boolean => d === "int32";

export function isDType(d: unknown): d is DType {
  return typeof d === "string" && (DTYPES as readonly string[]).includes(d);
}

export function checkDType(d: unknown, op: string): DType {
  if (!isDType(d)) throw new Error(`${op}: unknown dtype ${JSON.stringify(d)}; use one of ${DTYPES.join(", ")}.`);
  return d;
}

export function typedArrayFor(d: DType, n: number): TypedArray {
  switch (d) {
    case "float32":
      return new Float32Array(n);
    case "float64":
      return new Float64Array(n);
    case "int32":
      return new Int32Array(n);
    case "bool":
      return new Uint8Array(n);
  }
}

/**
 * Several arrays at once: one allocation per dtype, handed out as views. Many small
 * allocations each cost a backing store; views of one do not.
 */
export function typedArraysFor(dtypes: readonly DType[], sizes: readonly number[]): TypedArray[] {
  const total = new Map<DType, number>();
  dtypes.forEach((d, i) => total.set(d, (total.get(d) ?? 0) + sizes[i]!));
  const block = new Map([...total].map(([d, n]) => [d, { data: typedArrayFor(d, n), at: 0 }]));
  return dtypes.map((d, i) => {
    const b = block.get(d)!;
    const view = b.data.subarray(b.at, b.at + sizes[i]!);
    b.at += sizes[i]!;
    return view;
  });
}

export function dtypeOfTypedArray(a: TypedArray): DType {
  if (a instanceof Float32Array) return "float32";
  if (a instanceof Float64Array) return "float64";
  if (a instanceof Int32Array) return "int32";
  return "bool";
}

const RANK: Record<DType, number> = { bool: 0, int32: 1, float32: 2, float64: 3 };

/**
 * Result dtype of combining operands (numpy/JAX promotion with weak types):
 * a weakly typed operand (a JS number) never widens a strongly typed one of the
 * same or higher kind; a weak float joined with a strong int gives float32.
 */
export function promoteTypes(items: readonly { dtype: DType; weak: boolean }[]): { dtype: DType; weak: boolean } {
  const strong = items.filter((i) => !i.weak);
  const weak = items.filter((i) => i.weak);
  if (strong.length === 0) {
    let best = weak[0]!.dtype;
    for (const w of weak) if (RANK[w.dtype] > RANK[best]) best = w.dtype;
    return { dtype: best, weak: true };
  }
  let best = strong[0]!.dtype;
  for (const s of strong) if (RANK[s.dtype] > RANK[best]) best = s.dtype;
  for (const w of weak) {
    if (isFloat(w.dtype) && !isFloat(best)) best = "float32";
    else if (w.dtype === "int32" && best === "bool") best = "int32";
  }
  return { dtype: best, weak: false };
}

/** Short name used in printed IR and error messages: f32[3,4]. */
export const DTYPE_SHORT: Record<DType, string> = { float32: "f32", float64: "f64", int32: "i32", bool: "bool" };
