/**
 * Shared by the second-derivative tests of the fused rasterizers (render-second-order,
 * webgpu-second-order): a fixed small soup, the three rasterizer configurations, an image loss,
 * Hessian-vector products and their central differences.
 */
import { expect } from "vitest";
import { grad, jvp, np, render as R, type Array } from "../src/index.js";

export type DT = "float32" | "float64";
export const D = 3;
/** Faces and image size: the CPU tests' and the smaller WebGPU ones' (eager kernels compile slowly on lavapipe). */
export interface Size {
  readonly F: number;
  readonly W: number;
  readonly H: number;
}
export const CPU_SIZE: Size = { F: 4, W: 7, H: 6 };
export const GPU_SIZE: Size = { F: 3, W: 5, H: 4 };

/** A fixed soup: faces overlapping near the centre, depths in [2, 5], corner attributes in [0.1, 0.9]. */
export function soup({ F }: Size): { xy: number[]; z: number[]; attrs: number[] } {
  let s = 11;
  const rnd = () => {
    s = (s * 16807) % 2147483647;
    return s / 2147483647;
  };
  const xy: number[] = [],
    z: number[] = [],
    attrs: number[] = [];
  for (let f = 0; f < F; f++) {
    const cx = rnd() * 1.0 - 0.5,
      cy = rnd() * 1.0 - 0.5;
    for (let k = 0; k < 3; k++) {
      xy.push(cx + (rnd() - 0.5) * 1.1, cy + (rnd() - 0.5) * 1.1);
      z.push(2 + 3 * rnd());
      for (let d = 0; d < D; d++) attrs.push(0.1 + 0.8 * rnd());
    }
  }
  return { xy, z, attrs };
}

export const arrays = (dtype: DT, backend: "cpu" | "webgpu", sz = CPU_SIZE) => {
  const s = soup(sz),
    { F } = sz;
  return [
    np.reshape(np.array(s.xy, { dtype, backend }), [F, 3, 2]),
    np.reshape(np.array(s.z, { dtype, backend }), [F, 3]),
    np.reshape(np.array(s.attrs, { dtype, backend }), [F, 3, D]),
  ];
};

/** A texture lookup at the first two attributes, times the third: a nonlinear fragment. */
export const textured = (dtype: DT, backend: "cpu" | "webgpu") => {
  const tex = np.reshape(
    np.array(
      globalThis.Array.from({ length: 5 * 4 * 2 }, (_, i) => 0.2 + 0.6 * Math.abs(Math.sin(1.3 * i))),
      { dtype, backend },
    ),
    [5, 4, 2],
  );
  return (a: Array) => {
    const [uv, rest] = np.split(a, [2], -1) as [Array, Array];
    return np.mul(R.sampleBilinear(tex, uv), rest);
  };
};

export type Kind = "softras colour kernel" | "softras layered, textured" | "dibr, textured";
export const KINDS: Kind[] = ["softras colour kernel", "softras layered, textured", "dibr, textured"];

/** The image (colour and alpha channels) of one kind, fused (the default). */
export function image(kind: Kind, dtype: DT, backend: "cpu" | "webgpu", { F, W, H }: Size) {
  const frag = textured(dtype, backend);
  const bg = (v: number[]) => np.array(v, { dtype, backend });
  return (xy: Array, z: Array, attrs: Array): Array => {
    if (kind === "dibr, textured") {
      const r = R.dibrRasterize({ xy, z }, attrs, W, H, { sigmaInv: 300, background: bg([0.2, 0.3]) }, frag);
      return np.concatenate([r.features!, np.expandDims(r.alpha, -1)], -1);
    }
    const opts = { sigma: 1e-2, gamma: 0.3, near: 1, far: 10, layers: F };
    const r =
      kind === "softras colour kernel"
        ? R.softRasterize({ xy, z }, attrs, W, H, { ...opts, background: bg([0.2, 0.3, 0.4]) })
        : R.softRasterize({ xy, z }, attrs, W, H, { ...opts, background: bg([0.2, 0.3]) }, frag);
    return np.concatenate([r.rgb!, np.expandDims(r.alpha, -1)], -1);
  };
}

/** A scalar loss with non-uniform pixel weights. */
export const lossOf = (kind: Kind, dtype: DT, backend: "cpu" | "webgpu", sz = CPU_SIZE) => {
  const f = image(kind, dtype, backend, sz);
  return (xy: Array, z: Array, attrs: Array): Array => {
    const img = f(xy, z, attrs);
    const w = np.reshape(
      np.array(
        globalThis.Array.from({ length: img.size }, (_, i) => Math.sin(0.7 * i + 0.3)),
        { dtype, backend },
      ),
      img.shape,
    );
    return np.sum(np.mul(np.mul(img, img), w));
  };
};

export const gradAll =
  (L: (...xs: Array[]) => Array) =>
  (...xs: Array[]) =>
    grad(L, { argnums: [0, 1, 2] })(...xs) as Array[];
export const direction = (xs: Array[], backend: "cpu" | "webgpu") =>
  xs.map((x, j) =>
    np.reshape(
      np.array(
        globalThis.Array.from({ length: x.size }, (_, i) => Math.cos(2.3 * i + 1.7 * j)),
        { dtype: x.dtype as DT, backend },
      ),
      x.shape,
    ),
  );
export const host = (xs: Array[]) => xs.flatMap((x) => globalThis.Array.from(x.dataSync(), Number));
export const hostAsync = async (xs: Array[]) =>
  (await Promise.all(xs.map(async (x) => globalThis.Array.from(await x.data(), Number)))).flat();
export const maxAbs = (a: number[]) => Math.max(1e-12, ...a.map(Math.abs));
/** max |a − b| relative to b's largest entry. */
export const relErr = (a: number[], b: number[]) => {
  expect(a.length).toBe(b.length);
  return Math.max(...a.map((v, i) => Math.abs(v - b[i]!))) / maxAbs(b);
};

/** Hessian-vector product by forward-over-reverse. */
export function hvp(L: (...xs: Array[]) => Array, xs: Array[], v: Array[]): Array[] {
  return (jvp((...p: Array[]) => gradAll(L)(...p), xs, v) as [Array[], Array[]])[1];
}
/** Central differences of the gradient along v. */
export function fdHvp(L: (...xs: Array[]) => Array, xs: Array[], v: Array[], h = 1e-5): number[] {
  const at = (s: number) => host(gradAll(L)(...xs.map((x, i) => np.add(x, np.mul(v[i]!, s)))));
  const [p, m] = [at(h), at(-h)];
  return p.map((a, i) => (a - m[i]!) / (2 * h));
}
