/**
 * The fused rasterizers split over threads (src/render/fused/raster-threads.ts) give the one-thread
 * bits: SoftRas's colour kernel, its layered geometry kernel under a fragment function, its
 * silhouette and DIB-R — image, vjp (the adjoints run face by face; the background's too) and jvp — on random triangle
 * soups (faces behind the camera, degenerate and off screen, every culling mode, both distance
 * functions), in float64 and float32, on 1, 2 and 3 threads, with the workers really taking pieces.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { init, jvp, np, render as R, vjp, type Array } from "../src/index.js";
import { setCpuThreads, THREAD_MIN_WORK } from "../src/core/compile/threads.js";
import {
  rasterThreadedCalls,
  rasterWorkerPieces,
  runRaster,
  setRasterCallerClaims,
  startRasterWorkers,
} from "../src/render/fused/raster-threads.js";
import { soupArb, type Soup } from "../property-tests/arbitraries.js";

const D = 3;
const soups = soupArb({
  faces: 40,
  channels: D,
  width: fc.constantFrom(7, 16),
  height: fc.constantFrom(5, 13),
  radius: [0.1, 0.6],
});
const optsArb = fc.record({
  sigma: fc.double({ min: 3e-3, max: 2e-2, noNaN: true }),
  gamma: fc.double({ min: 3e-3, max: 1, noNaN: true }),
  eps: fc.double({ min: 1e-3, max: 0.3, noNaN: true }),
  faceCulling: fc.constantFrom("none" as const, "back" as const, "front" as const),
  cullAlpha: fc.boolean(),
  distFunc: fc.constantFrom("euclidean" as const, "barycentric" as const),
  colorBaryGradient: fc.boolean(),
  layers: fc.constantFrom(1, 3),
  near: fc.constant(1),
  far: fc.constant(10),
});
const dibrArb = fc.record({
  sigmaInv: fc.double({ min: 200, max: 3000, noNaN: true }),
  boxLen: fc.double({ min: 0, max: 0.3, noNaN: true }),
  knum: fc.constantFrom(1, 2, 30),
  faceCulling: fc.constantFrom("none" as const, "back" as const, "front" as const),
});
type Kind = "colour" | "layers" | "silhouette" | "dibr";

const noise = (n: number, k: number) =>
  globalThis.Array.from({ length: n }, (_, i) => Math.sin(12.9898 * (i + 1) + 78.233 * k));

/** Image, its vjp for fixed cotangents and its jvp for fixed tangents, as flat float64 host arrays. */
async function evaluate(
  s: Soup,
  kind: Kind,
  o: R.SoftRasOptions,
  d: R.DibrOptions,
  dtype: "float32" | "float64",
): Promise<Float64Array[]> {
  const arr = (xs: number[], shape: number[]) => np.reshape(np.array(xs, { dtype }), shape);
  const xy = arr(s.xy, [s.F, 3, 2]),
    z = arr(s.z, [s.F, 3]),
    attrs = arr(s.attrs, [s.F, 3, D]);
  const background = arr([0.2, 0.3, 0.4], [D]);
  const image = (a: Array, b: Array, c: Array, bg: Array): Array => {
    if (kind === "dibr") {
      const r = R.dibrRasterize({ xy: a, z: b }, c, s.W, s.H, { ...d, background: bg }, (x) => x);
      return np.concatenate([r.features!, np.expandDims(r.alpha, -1)], -1);
    }
    const r = R.softRasterize(
      { xy: a, z: b },
      kind === "silhouette" ? null : c,
      s.W,
      s.H,
      { ...o, background: bg },
      kind === "layers" ? (x: Array) => np.square(x) : undefined,
    );
    if (kind === "silhouette") return np.mul(r.alpha, np.sum(c));
    return np.concatenate([r.rgb!, np.expandDims(r.alpha, -1)], -1);
  };
  const [img, back] = vjp(image, xy, z, attrs, background) as [Array, (ct: Array) => Array[]];
  const cots = back(arr(noise(img.size, 1), [...img.shape]));
  const tangents: [Array, Array, Array, Array] = [
    arr(noise(s.F * 6, 2), [s.F, 3, 2]),
    arr(noise(s.F * 3, 3), [s.F, 3]),
    arr(noise(s.F * 3 * D, 4), [s.F, 3, D]),
    arr(noise(D, 5), [D]),
  ];
  const [, tan] = jvp(image, [xy, z, attrs, background], tangents) as [Array, Array];
  return Promise.all([img, ...cots, tan].map(async (a) => Float64Array.from(await a.data())));
}

/** Evaluate on each thread count; every result must equal the one-thread result bit for bit. */
async function sameOnEveryThreadCount(s: Soup, kind: Kind, o: R.SoftRasOptions, d: R.DibrOptions) {
  for (const dtype of ["float64", "float32"] as const) {
    setCpuThreads(1);
    const one = await evaluate(s, kind, o, d, dtype);
    // Threads sharing the pieces as they come, and the workers alone (every piece through a worker).
    for (const [n, callerClaims] of [
      [2, true],
      [3, true],
      [3, false],
    ] as const) {
      setCpuThreads(n, { minWork: 0 });
      setRasterCallerClaims(callerClaims);
      const [calls, pieces] = [rasterThreadedCalls(), rasterWorkerPieces()];
      const many = await evaluate(s, kind, o, d, dtype).finally(() => setRasterCallerClaims(true));
      const how = `${kind} ${dtype} on ${n} threads${callerClaims ? "" : ", workers only"}`;
      expect(rasterThreadedCalls(), `${how}: no rasterizer call ran threaded`).toBeGreaterThan(calls);
      if (!callerClaims) expect(rasterWorkerPieces(), `${how}: the workers ran no piece`).toBeGreaterThan(pieces);
      many.forEach((a, k) => {
        const b = one[k]!;
        const at = a.findIndex((v, i) => !Object.is(v, b[i]));
        expect(at, `${how}, output ${k}: [${at}] ${a[at]} ≠ ${b[at]} (one thread)`).toBe(-1);
      });
    }
  }
}

describe("fused rasterizers on several threads", () => {
  let previous = 1;
  beforeAll(async () => {
    await init({ backend: "cpu" });
    previous = setCpuThreads(3, { minWork: 0 });
    expect(await startRasterWorkers()).toBe(2);
  }, 60_000);
  afterAll(() => {
    setCpuThreads(previous, { minWork: THREAD_MIN_WORK });
  });

  it("SoftRas (colour, layers, silhouette): the one-thread bits on 2 and 3 threads", async () => {
    await fc.assert(
      fc.asyncProperty(soups, optsArb, fc.constantFrom<Kind>("colour", "layers", "silhouette"), (s, o, kind) =>
        sameOnEveryThreadCount(s, kind, o, {}),
      ),
      { numRuns: 12 },
    );
  }, 300_000);

  it("splits a call by its work: a 1,280-face sphere at 64² splits, a 12-face box at 64² does not", async () => {
    setCpuThreads(2, { minWork: THREAD_MIN_WORK });
    try {
      const camera = R.perspectiveCamera({ distance: 3.2, elevation: 20, azimuth: 30 });
      const lights = { ambient: 0.4, directional: [] };
      const threadedFor = async (mesh: R.Mesh) => {
        const before = rasterThreadedCalls();
        await R.render(mesh, camera, lights, undefined, { width: 64, softras: { sigma: 1 / 64 ** 2 } }).data();
        return rasterThreadedCalls() - before;
      };
      expect(await threadedFor(R.meshFromData(R.icosphereData(3, 1), { colors: [0.8, 0.5, 0.3] }))).toBe(1);
      expect(await threadedFor(R.meshFromData(R.boxData([0.5, 0.5, 0.5]), { colors: [0.8, 0.5, 0.3] }))).toBe(0);
    } finally {
      setCpuThreads(3, { minWork: 0 });
    }
  });

  it("a kernel that fails in a worker or on the calling thread is reported, and the next call is right", () => {
    setCpuThreads(2, { minWork: 0 });
    const p = { width: 8, height: 8, sigmaInv: 1000, boxLen: 0.1, knum: 30, culling: "back" as const };
    const xy = Float32Array.of(-0.5, -0.5, 0.5, -0.5, 0, 0.5),
      z = Float32Array.of(2, 2, 2);
    const outs = { logT: ["float32", 64], face: ["int32", 64], bary: ["float32", 192] } as const;
    // Without the front-facing flags the culling test throws in every piece.
    for (const callerClaims of [false, true]) {
      setRasterCallerClaims(callerClaims);
      try {
        expect(() => runRaster("dibr_geometry", { xy, z }, outs, p)).toThrow(
          callerClaims ? /front|undefined/ : /failed in a worker thread: .*TypeError/,
        );
      } finally {
        setRasterCallerClaims(true);
      }
    }
    const good = runRaster("dibr_geometry", { xy, z, front: Uint8Array.of(1) }, outs, p).outs;
    setCpuThreads(1);
    const one = runRaster("dibr_geometry", { xy, z, front: Uint8Array.of(1) }, outs, p).outs;
    for (const k of Object.keys(one)) expect(good[k], k).toEqual(one[k]);
    expect(
      [...one.face!].some((f) => f === 0),
      "the triangle covers pixels",
    ).toBe(true);
  });

  it("DIB-R: the one-thread bits on 2 and 3 threads", async () => {
    await fc.assert(
      fc.asyncProperty(soups, dibrArb, (s, d) => sameOnEveryThreadCount(s, "dibr", {}, d)),
      { numRuns: 8 },
    );
  }, 300_000);
});
