/**
 * The fused rasterizer kernels on WebGPU (WGSL, float32) — SoftRas's colour kernel, its layered
 * geometry kernel under a fragment function and its silhouette, DIB-R's — against the same kernels on the CPU
 * (float64, themselves property-tested against the array programs): on random triangle soups with
 * faces behind the camera, degenerate and off screen, both distance functions, every culling mode
 * and with/without barycentric colour gradients, the image, its vjp (reverse mode) and jvp
 * (forward mode) agree to float32 tolerance; and a jitted image gradient on WebGPU compiles
 * and matches.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import { grad, init, jit, jvp, np, render as R, vjp, type Array } from "../src/index.js";
import { describeGpu } from "./webgpu-helpers.js";
import { soupArb, type Soup } from "../property-tests/arbitraries.js";

const D = 3;
// Few image sizes: around the fused kernels, the layered path's array code compiles WebGPU kernels per shape.
const soups = soupArb({
  faces: 40,
  channels: D,
  width: fc.constantFrom(8, 13),
  height: fc.constantFrom(8, 11),
  radius: [0.1, 0.6],
});

const optsArb = fc
  .record({
    sigma: fc.double({ min: 3e-3, max: 2e-2, noNaN: true }),
    logGamma: fc.double({ min: Math.log(3e-3), max: Math.log(1), noNaN: true }),
    eps: fc.double({ min: 1e-3, max: 0.3, noNaN: true }),
    faceCulling: fc.constantFrom("none" as const, "back" as const, "front" as const),
    cullAlpha: fc.boolean(),
    distFunc: fc.constantFrom("euclidean" as const, "barycentric" as const),
    colorBaryGradient: fc.boolean(),
    layers: fc.constantFrom(1, 3, 8),
  })
  .map((o) => ({
    sigma: o.sigma,
    gamma: Math.exp(o.logGamma),
    eps: o.eps,
    faceCulling: o.faceCulling,
    cullAlpha: o.cullAlpha,
    distFunc: o.distFunc,
    colorBaryGradient: o.colorBaryGradient,
    near: 1,
    far: 10,
    layers: o.layers,
  }));

/**
 * colour: the fully fused colour kernel; layers: the layered geometry kernel (a fragment function); silhouette: no
 * colours.
 */
type Kind = "colour" | "layers" | "silhouette";
const kindArb = fc.constantFrom<Kind>("colour", "layers", "silhouette");

const noise = (n: number, k: number) =>
  globalThis.Array.from({ length: n }, (_, i) => Math.sin(12.9898 * (i + 1) + 78.233 * k));
const host = async (a: Array) => globalThis.Array.from(await a.data(), Number);

async function evaluate(s: Soup, o: R.SoftRasOptions, kind: Kind, backend: "cpu" | "webgpu") {
  await init({ backend });
  const dtype = backend === "cpu" ? "float64" : "float32";
  const arr = (xs: number[], shape: number[]) => np.reshape(np.array(xs, { dtype, backend }), shape);
  const xy = arr(s.xy, [s.F, 3, 2]),
    z = arr(s.z, [s.F, 3]),
    attrs = arr(s.attrs, [s.F, 3, D]);
  const image = (a: Array, b: Array, c: Array) => {
    const r = R.softRasterize(
      { xy: a, z: b },
      kind === "silhouette" ? null : c,
      s.W,
      s.H,
      { ...o, background: [0.2, 0.3, 0.4] },
      kind === "layers" ? (x: Array) => np.square(x) : undefined,
    );
    // The silhouette alone has no colour: keep the colours' operand in the graph with a zero-weight term.
    if (kind === "silhouette")
      return np.concatenate(
        [np.expandDims(r.alpha, -1), np.zeros([s.H, s.W, D], { dtype: r.alpha.dtype, backend })],
        -1,
      );
    return np.concatenate([r.rgb!, np.expandDims(r.alpha, -1)], -1);
  };
  const [img, back] = vjp(image, xy, z, attrs) as [Array, (ct: Array) => Array[]];
  const n = s.W * s.H * (D + 1);
  const cots = back(arr(noise(n, 1), [s.H, s.W, D + 1]));
  const [, tan] = jvp(
    image,
    [xy, z, attrs],
    [arr(noise(s.F * 6, 2), [s.F, 3, 2]), arr(noise(s.F * 3, 3), [s.F, 3]), arr(noise(s.F * 3 * D, 4), [s.F, 3, D])],
  ) as [Array, Array];
  return {
    img: await host(img),
    gxy: await host(cots[0]!),
    gz: await host(cots[1]!),
    gA: await host(cots[2]!),
    tan: await host(tan),
  };
}

function close(a: number[], b: number[], rel: number, what: string, scaleOf: number[] = b): void {
  const scale = Math.max(1e-3, ...scaleOf.map(Math.abs));
  expect(a.length, what).toBe(b.length);
  let worst = 0,
    at = -1;
  a.forEach((v, i) => {
    const d = Math.abs(v - b[i]!);
    if (d > worst) {
      worst = d;
      at = i;
    }
  });
  expect(
    worst,
    `${what}: worst |webgpu − cpu| ${worst} at ${at} (webgpu ${a[at]}, cpu ${b[at]}), scale ${scale}`,
  ).toBeLessThanOrEqual(rel * scale);
}

describeGpu("fused rasterizer kernels on WebGPU", () => {
  it("images, vjp and jvp agree with the CPU kernel on random soups", async () => {
    await fc.assert(
      fc.asyncProperty(soups, optsArb, kindArb, async (s, o, kind) => {
        const [gpu, cpu] = [await evaluate(s, o, kind, "webgpu"), await evaluate(s, o, kind, "cpu")];
        // float32 against float64: the image to ~1e-5; derivatives to ~1e-3 of their largest entry
        // (pairs near the prune radius can flip between kept and pruned in float32).
        close(gpu.img, cpu.img, 2e-4, "image");
        // One scale for the whole gradient: float32 rounding of shared terms (1/γ-amplified depths) is relative to its
        // largest part.
        const all = [...cpu.gxy, ...cpu.gz, ...cpu.gA];
        close(gpu.gxy, cpu.gxy, 5e-3, "∂/∂xy", all);
        close(gpu.gz, cpu.gz, 5e-3, "∂/∂z", all);
        close(gpu.gA, cpu.gA, 5e-3, "∂/∂colours", all);
        close(gpu.tan, cpu.tan, 5e-3, "jvp");
      }),
      { numRuns: 30 },
    );
  }, 600_000);

  it("DIB-R: images, vjp and jvp agree with the CPU kernel on random soups", async () => {
    const dibrArb = fc.record({
      sigmaInv: fc.double({ min: 200, max: 3000, noNaN: true }),
      boxLen: fc.double({ min: 0, max: 0.3, noNaN: true }),
      knum: fc.constantFrom(1, 2, 30),
      faceCulling: fc.constantFrom("none" as const, "back" as const, "front" as const),
    });
    const run = async (s: Soup, o: R.DibrOptions, backend: "cpu" | "webgpu") => {
      await init({ backend });
      const dtype = backend === "cpu" ? "float64" : "float32";
      const arr = (xs: number[], shape: number[]) => np.reshape(np.array(xs, { dtype, backend }), shape);
      const z = arr(s.z, [s.F, 3]),
        attrs = arr(s.attrs, [s.F, 3, D]);
      const image = (xy: Array) => {
        const r = R.dibrRasterize({ xy, z }, attrs, s.W, s.H, { ...o, background: [0.2, 0.3, 0.4] }, (a) => a);
        return np.concatenate([r.features!, np.expandDims(r.alpha, -1)], -1);
      };
      const xy = arr(s.xy, [s.F, 3, 2]);
      const [img, back] = vjp(image, xy) as [Array, (ct: Array) => Array[]];
      const g = back(arr(noise(s.W * s.H * (D + 1), 5), [s.H, s.W, D + 1]))[0]!;
      const [, tan] = jvp(image, [xy], [arr(noise(s.F * 6, 6), [s.F, 3, 2])]) as [Array, Array];
      return { img: await host(img), g: await host(g), tan: await host(tan) };
    };
    await fc.assert(
      fc.asyncProperty(soups, dibrArb, async (s, o) => {
        const [gpu, cpu] = [await run(s, o, "webgpu"), await run(s, o, "cpu")];
        close(gpu.img, cpu.img, 2e-4, "DIB-R image");
        close(gpu.g, cpu.g, 5e-3, "DIB-R ∂/∂xy");
        close(gpu.tan, cpu.tan, 5e-3, "DIB-R jvp");
      }),
      { numRuns: 20 },
    );
  }, 600_000);

  // The plane's shared edges are joined.
  it("a subdivided ground plane has no seams on WebGPU and matches the CPU, image and vertex gradient", async () => {
    const size = 48;
    const run = async (backend: "cpu" | "webgpu") => {
      await init({ backend });
      const dtype = backend === "cpu" ? "float64" : "float32";
      const plane = R.groundPlane({ size: 1.6, subdivisions: 4, colors: [0.8, 0.8, 0.8], dtype });
      const camera = R.perspectiveCamera({
        eye: [0.3, 1.2, -2.2],
        at: [0, 0, 0],
        up: [0, 1, 0],
        fovY: 60,
        aspect: 1,
        near: 0.5,
        far: 20,
        dtype,
      });
      const draw = (v: Array, sharedEdges: "join" | "split" = "join") =>
        R.render({ ...plane, vertices: v }, camera, { ambient: 1, directional: [] }, undefined, {
          width: size,
          background: [0, 0, 0],
          softras: { sharedEdges },
        });
      const loss = (v: Array) =>
        np.sum(np.mul(draw(v), np.array(noise(size * size * 4, 3), { dtype, backend }).reshape([size, size, 4])));
      return {
        img: await host(draw(plane.vertices)),
        split: await host(draw(plane.vertices, "split")),
        g: await host(grad(loss)(plane.vertices)),
      };
    };
    const [gpu, cpu] = [await run("webgpu"), await run("cpu")];
    // Pixels well inside the plane on the CPU (alpha ≥ 0.999 there is tests/render-seams.test.ts's claim): the same on
    // WebGPU.
    const inside = cpu.img.flatMap((v, i) => (i % 4 === 3 && v > 0.999 ? [i] : []));
    expect(inside.length).toBeGreaterThan(300);
    expect(Math.min(...inside.map((i) => gpu.img[i]!))).toBeGreaterThanOrEqual(0.999);
    expect(Math.min(...inside.map((i) => gpu.split[i]!))).toBeLessThan(0.9); // SoftRas' own edges: seams
    close(gpu.img, cpu.img, 2e-4, "image");
    close(gpu.g, cpu.g, 5e-3, "∂/∂vertices");
  }, 300_000);

  it("jit(grad(loss ∘ render)) of a lit sphere on WebGPU matches the CPU", async () => {
    const size = 32;
    const run = async (backend: "cpu" | "webgpu") => {
      await init({ backend });
      const dtype = backend === "cpu" ? "float64" : "float32";
      const mesh = R.meshFromData(R.icosphereData(2, 1));
      const v0 = np.array(await mesh.vertices.data(), { dtype, backend }).reshape(mesh.vertices.shape);
      const faces = np.array(await mesh.faces.data(), { dtype: "int32", backend }).reshape(mesh.faces.shape);
      const camera = R.perspectiveCamera({ distance: 3.2, elevation: 20, azimuth: 30, dtype });
      const lights: R.Lights = { ambient: 0.35, directional: [{ direction: [0.4, 1, -0.6], color: 0.65 }] };
      const target = np.full([size, size, 4], 0.3, { dtype, backend });
      const loss = (v: Array) =>
        np.mean(
          np.square(
            np.sub(
              R.render({ vertices: v, faces }, camera, lights, undefined, {
                width: size,
                rasterizer: "softras",
                softras: { sigma: 1 / size ** 2 },
              }),
              target,
            ),
          ),
        );
      return host(jit(grad(loss))(v0));
    };
    const [gpu, cpu] = [await run("webgpu"), await run("cpu")];
    close(gpu, cpu, 2e-3, "jit(grad) vertices");
  }, 300_000);
});
