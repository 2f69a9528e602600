/**
 * The paper's Table 4 (right), timing analysis: steps per second of the differentiable physics
 * (DP) and rendering (DR), forward and backward, for soft bodies of 100 to 10,000 tets, under
 * `jit` on one backend per process, beside the paper's GPU numbers (dflex + their renderer, Hz).
 *   DP forward / backward: FEM substeps (semi-implicit Euler, ground contact), value / gradient of
 *     a loss on the final state w.r.t. the per-tet μ, λ, damping, activation (bench/physics.ts).
 *   DR forward: renders of the body's surface (SoftRas, per-face colours, 64² pixels).
 *   DP+DR backward: a video of 8 frames, one substep and one render each, the gradient of its
 *     pixelwise MSE w.r.t. the material — frames per second.
 *
 *   npx tsx bench/table4.ts [--backend cpu|webgpu] [--sizes 100,200,400,1000,2000,5000,10000] [--rows all|dp]
 *                           [--kernels js|wasm-scalar|wasm-f64x2|wasm]
 * The body starts half a millimetre above the ground (bench/physics.ts BOX_LIFT) and lands in the
 * second substep, so every timed DP rollout includes contact; the forward row reports the lowest
 * final height, and a scene that never reaches the ground is an error.
 */
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { grad, init, jit, models, np, render as R, type Array } from "gradsim";

const { contact, fem, meshes, particles } = models;
import { setKernels, timeIt, withThreads } from "./lib.js";
import { boxFor, stepsFor } from "./physics.js";

/** gradSim Table 4 (right): forward DP, forward DR, backward DP, backward DP+DR (Hz). */
export const PAPER_TABLE4: Record<number, readonly [number, number, number, number]> = {
  100: [9057, 3504, 3721, 3057],
  200: [9057, 3478, 3780, 2963],
  400: [8751, 3357, 3750, 1360],
  1000: [4174, 1690, 1644, 1041],
  2000: [3967, 1584, 1655, 698],
  5000: [3871, 1529, 1553, 424],
  10000: [3721, 1500, 1429, 248],
};
export const TABLE4_WORKLOADS = [
  "table4-dp-forward",
  "table4-dr-forward",
  "table4-dp-backward",
  "table4-dpdr-backward",
] as const;

export interface Table4Row {
  readonly workload: (typeof TABLE4_WORKLOADS)[number];
  readonly size: number;
  readonly backend: string;
  readonly mode: "jit";
  /** The CPU jit's kernel form (`--kernels`). */
  readonly kernels?: string;
  readonly stepsPerSec: number;
  readonly paperGpuStepsPerSec: number;
  /** DP rows: the first call's ms (tracing, compilation and one run). */
  readonly compile_ms?: number;
  /** DP forward: the lowest final vertex height (m); below 0, the body is in ground contact. */
  readonly lowestFinalY?: number;
}

const SIZE = 64,
  FRAMES = 8;
/**
 * Median ms of `runs` timed calls after ≥ 3 warm-up calls and ≥ 2 s of them: the first call
 * traces and compiles; the JavaScript engine optimises the generated kernels on a background
 * thread, which on a loaded machine finishes several calls later (the backward at 1,000 tets ran
 * ~2× slower over calls 2–9 than from call 10 on).
 */
const timed = async (fn: () => Promise<unknown>, runs: number) => timeIt(fn, { warmup: 3, runs, warmupMs: 2000 });
const ms = async (fn: () => Promise<unknown>, runs: number) => (await timed(fn, runs)).ms_median;

/** Which rows: all four, or the physics (DP) rows alone (the peer comparison). */
export type Table4Rows = "all" | "dp";

export async function table4(
  backend: "cpu" | "webgpu",
  sizes: readonly number[],
  emit: (r: Table4Row) => void,
  rows: Table4Rows = "all",
  kernels = "wasm",
): Promise<void> {
  await init({ backend });
  setKernels(kernels);
  for (const target of sizes) {
    const mesh = boxFor(target);
    const tets = meshes.tetCount(mesh);
    const { system, state } = fem.softBody(mesh, {
      density: 1000,
      mu: 1e4,
      lambda: 1e4,
      damping: 1,
      velocity: [1, -0.5, 0],
      ground: contact.ground({ ke: 1e4, kd: 10, kf: 10, mu: 0.5 }),
    });
    type Material = { mu: Array; lambda: Array; damping: Array; activation: Array };
    const material: Material = {
      mu: system.tets!.mu,
      lambda: system.tets!.lambda,
      damping: system.tets!.damping,
      activation: system.tets!.activation,
    };
    const withMaterial = (m: Material) => ({ ...system, tets: { ...system.tets!, ...m } });
    const steps = stepsFor(tets),
      runs = tets > 5000 ? 3 : 5,
      dt = 1 / 1920;
    const paper = PAPER_TABLE4[target] ?? [NaN, NaN, NaN, NaN];
    const row = (k: number, rate: number, extra: Partial<Table4Row> = {}) =>
      emit({
        workload: TABLE4_WORKLOADS[k]!,
        size: tets,
        backend,
        mode: "jit",
        stepsPerSec: Math.round(rate * 10) / 10,
        paperGpuStepsPerSec: paper[k]!,
        ...extra,
      });

    // Physics alone.
    const final = (m: Material) => particles.simulate(withMaterial(m), state, { dt, substeps: steps, frames: 1 }).x;
    const fwd = jit(final),
      bwd = jit(grad((m: Material) => np.sum(np.square(final(m)))));
    const tf = performance.now();
    const lowestFinalY = lowestY(await fwd(material).data());
    const compileFwd = Math.round(performance.now() - tf);
    if (!(lowestFinalY < 0)) {
      throw new Error(
        `table4: at ${tets} tets the lowest vertex ends at y = ${lowestFinalY} m, above the ground: ` +
          `the timed ${steps} substeps include no contact (lower BOX_LIFT in bench/physics.ts).`,
      );
    }
    row(0, (1000 * steps) / (await ms(() => fwd(material).data(), runs)), { lowestFinalY, compile_ms: compileFwd });
    const backward = async () => {
      const t = await timed(async () => (bwd(material) as Material).mu.data(), runs);
      row(2, (1000 * steps) / t.ms_median, { compile_ms: Math.round(t.ms_first) });
    };
    if (rows === "dp") {
      await backward();
      continue;
    }

    // Rendering alone: the surface seen from the front-left, coloured per face.
    const surface = np.reshape(np.array(meshes.tetSurface(mesh), { dtype: "int32" }), [-1, 3]);
    const nf = surface.shape[0]!;
    const faceColors = np.reshape(
      np.array(
        globalThis.Array.from({ length: nf * 3 }, (_, i) => 0.35 + 0.5 * Math.abs(Math.sin(0.7 * i))),
        { dtype: "float32" },
      ),
      [nf, 3],
    );
    const ext = [0, 1, 2].map((d) => Math.max(...mesh.vertices.filter((_, i) => i % 3 === d)));
    const at: [number, number, number] = [ext[0]! / 2, ext[1]! / 2, ext[2]! / 2],
      reach = 2.2 * Math.max(...ext);
    const camera = R.perspectiveCamera({
      eye: [at[0] - 0.5 * reach, at[1] + 0.6 * reach, at[2] - reach],
      at,
      fovY: 40,
    });
    const options: R.RenderOptions = { width: SIZE, rasterizer: "softras", softras: { sigma: 1 / SIZE ** 2 } };
    const image = (x: Array) =>
      R.render(
        { vertices: x, faces: surface, faceColors },
        camera,
        { ambient: 0.4, directional: [{ direction: [0.3, 1, -0.5], color: 0.6 }] },
        undefined,
        options,
      );
    const x0 = state.x;
    const draw = jit(image);
    row(1, 1000 / (await ms(() => draw(x0).data(), runs)));

    await backward();

    // Physics and rendering: a short video, one substep and one render per frame.
    const blank = np.zeros([FRAMES, SIZE, SIZE, 4]);
    const videoLoss = (m: Material) => {
      const xs = particles.simulate(withMaterial(m), state, { dt, substeps: 1, frames: FRAMES }).x; // [T, N, 3]
      const frames = np.stack(
        np.split(xs, FRAMES, 0).map((x) => image(np.squeeze(x, 0))),
        0,
      );
      return np.mean(np.square(np.sub(frames, blank)));
    };
    const both = jit(grad(videoLoss));
    row(3, (1000 * FRAMES) / (await ms(async () => (both(material) as Material).mu.data(), runs)));
  }
}

/** Lowest y of flat [N, 3] positions. */
function lowestY(x: ArrayLike<number>): number {
  let low = Infinity;
  for (let i = 1; i < x.length; i += 3) low = Math.min(low, x[i]!);
  return low;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const arg = (k: string) => {
    const i = process.argv.indexOf(`--${k}`);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const sizes = arg("sizes")?.split(",").map(Number) ?? Object.keys(PAPER_TABLE4).map(Number);
  const kernels = arg("kernels") ?? "wasm";
  await table4(
    (arg("backend") as "cpu" | "webgpu" | undefined) ?? "cpu",
    sizes,
    (r) => {
      process.stdout.write(JSON.stringify(withThreads({ ...r, kernels })) + "\n");
      process.stderr.write(
        `${r.workload.padEnd(22)} ${String(r.size).padStart(6)} tets  ${r.backend.padEnd(6)} ` +
          `${String(r.stepsPerSec).padStart(9)} Hz   (paper GPU ${r.paperGpuStepsPerSec} Hz)\n`,
      );
    },
    (arg("rows") as Table4Rows | undefined) ?? "all",
    kernels,
  );
}
