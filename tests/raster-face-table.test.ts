/**
 * The fused rasterizers' adjoints reuse the face table their forward built when the geometry is the same
 * (raster-kernels.ts `remembered`, compared by value): with two renders of different geometry in one program, the
 * adjoints run in reverse order — the second render's reuses, the first's must rebuild — and the gradient is the sum
 * of each render's own gradient.
 */
import { describe, expect, it } from "vitest";
import { grad, jit, np, render as R, type Array } from "../src/index.js";

const mesh = R.meshFromData(R.icosphereData(1, 1), { colors: [0.85, 0.45, 0.25] });
const camera = R.perspectiveCamera({ distance: 3.2, elevation: 20, azimuth: 30 });
const lights: R.Lights = { ambient: 0.35, directional: [{ direction: [0.4, 1, -0.6], color: 0.65 }] };

describe("a render's adjoint and the face table of its forward", () => {
  for (const rasterizer of ["softras", "dibr"] as const) {
    it(`${rasterizer}: two renders of different geometry in one program, each adjoint on its own geometry`, () => {
      const options: R.RenderOptions = { width: 24, rasterizer, softras: { sigma: 1e-3 } };
      const target = np.full([24, 24, 4], 0.3);
      const term = (scale: number) => (v: Array) =>
        np.mean(
          np.square(
            np.sub(R.render({ ...mesh, vertices: np.mul(v, scale) }, camera, lights, undefined, options), target),
          ),
        );
      const both = jit(grad((v: Array) => np.add(term(1)(v), term(0.8)(v))));
      const each = [jit(grad(term(1))), jit(grad(term(0.8)))];
      const got = both(mesh.vertices).toList() as number[][];
      const want = np.add(each[0]!(mesh.vertices), each[1]!(mesh.vertices)).toList() as number[][];
      // float32 sums in another order: equal to a few ulps of the largest entry
      const scale = Math.max(...want.flat().map(Math.abs));
      expect(scale).toBeGreaterThan(1e-4);
      const err = Math.max(...got.flat().map((g, j) => Math.abs(g - want.flat()[j]!)));
      expect(err / scale).toBeLessThan(1e-5);
    });
  }
});
