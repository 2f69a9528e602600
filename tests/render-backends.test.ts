/**
 * Every backend renders what the float64 CPU reference renders, within float32 tolerance.
 * The backend list is BACKENDS (render-helpers.ts) plus WebGPU when an adapter exists.
 * On WebGPU nothing is read back synchronously, so binning falls back to one dense bucket
 * (capacity = faces), which is also what jit does without an explicit capacity.
 */
import { describe, expect, it } from "vitest";
import { init, np, type Array } from "../src/index.js";
import * as R from "../src/render/index.js";

async function webgpuAvailable(): Promise<boolean> {
  try {
    await init({ backend: "webgpu" });
    return true;
  } catch {
    return false;
  } finally {
    await init({ backend: "cpu" });
  }
}
const cases: { name: "cpu" | "webgpu"; tol: number }[] = [{ name: "cpu", tol: 2e-5 }];
if (await webgpuAvailable()) cases.push({ name: "webgpu", tol: 1e-4 });

const scene = (dtype: "float32" | "float64", backend: "cpu" | "webgpu"): R.Mesh => ({
  vertices: np.array(
    [
      [-0.7, -0.5, 0.1],
      [0.6, -0.6, -0.2],
      [-0.2, 0.7, 0.0],
      [0.75, 0.55, 0.3],
    ],
    { dtype, backend },
  ),
  // Faces made from host data (meshFromData), as meshes are: SoftRas joins their shared edge on every backend
  // (mesh-edges.ts).
  faces:
    backend === "cpu"
      ? np.array(
          [
            [0, 2, 1],
            [1, 2, 3],
          ],
          { dtype: "int32", backend },
        )
      : R.meshFromData({
          positions: [[0, 0, 0]],
          faces: [
            [0, 2, 1],
            [1, 2, 3],
          ],
        }).faces,
  colors: np.array(
    [
      [0.9, 0.2, 0.1],
      [0.1, 0.8, 0.2],
      [0.2, 0.3, 0.9],
      [0.8, 0.8, 0.1],
    ],
    { dtype, backend },
  ),
});
const OPTS: Record<string, R.RenderOptions> = {
  softras: { width: 8, softras: { sigma: 1e-2, gamma: 1e-2 } },
  dibr: { width: 8, rasterizer: "dibr", dibr: { sigmaInv: 300, boxLen: 0.3 } },
};

describe.each(cases)("backend $name matches the float64 CPU reference", ({ name, tol }) => {
  for (const ras of ["softras", "dibr"] as const) {
    it(`${ras}: Gouraud-shaded RGBA`, async () => {
      await init({ backend: "cpu" });
      const ref = R.render(
        scene("float64", "cpu"),
        R.perspectiveCamera({ dtype: "float64" }),
        undefined,
        undefined,
        OPTS[ras],
      ).dataSync();
      await init({ backend: name });
      let got: ArrayLike<number>;
      try {
        const img: Array = R.render(scene("float32", name), R.perspectiveCamera(), undefined, undefined, OPTS[ras]);
        expect(img.dtype).toBe("float32");
        got = await img.data();
      } finally {
        await init({ backend: "cpu" });
      }
      let d = 0;
      for (let i = 0; i < ref.length; i++) d = Math.max(d, Math.abs(ref[i]! - got[i]!));
      expect(d).toBeLessThan(tol);
      expect(Math.max(...ref)).toBeGreaterThan(0.3); // something was drawn
    });
  }
});
