/**
 * Second derivatives through the fused rasterizers (the default renderer), on the CPU in float64:
 * Hessian-vector products of an image loss by forward-over-reverse (jvp of grad) and
 * reverse-over-reverse (grad of a gradient's inner product) against central differences of the
 * gradient, and a full Hessian by jacfwd(jacrev), for SoftRas (the fully fused colour kernel and
 * the layered kernel with a texture fragment) and DIB-R (texture fragment).
 */
import { describe, expect, it } from "vitest";
import { grad, hessian, np, type Array } from "../src/index.js";
import { arrays, direction, fdHvp, gradAll, host, hvp, KINDS, lossOf, maxAbs, relErr } from "./second-order-helpers.js";

describe("second derivatives through the fused rasterizers (CPU, float64)", () => {
  for (const kind of KINDS) {
    it(`${kind}: jvp(grad) and grad-of-grad match central differences of the gradient`, () => {
      const L = lossOf(kind, "float64", "cpu");
      const xs = arrays("float64", "cpu"),
        v = direction(xs, "cpu");
      const fwdRev = host(hvp(L, xs, v));
      const fd = fdHvp(L, xs, v);
      expect(maxAbs(fd), "a nonzero Hessian-vector product").toBeGreaterThan(1e-3);
      expect(relErr(fwdRev, fd), "forward-over-reverse vs central differences").toBeLessThan(1e-6);
      // Reverse over reverse: ∇_x ⟨∇L(x), v⟩ = H v.
      const revRev = host(
        grad(
          (...p: Array[]) =>
            gradAll(L)(...p)
              .map((g, i) => np.sum(np.mul(g, v[i]!)))
              .reduce((a, b) => np.add(a, b)),
          { argnums: [0, 1, 2] },
        )(...xs) as Array[],
      );
      expect(relErr(revRev, fwdRev), "reverse-over-reverse vs forward-over-reverse").toBeLessThan(1e-10);
    });
  }

  // The hessian is jacfwd of jacrev, with both rasterizers.
  it("the loss's hessian in a screen-space shift of the mesh is symmetric and the differences of gradients", () => {
    for (const kind of ["softras layered, textured", "dibr, textured"] as const) {
      const L = lossOf(kind, "float64", "cpu");
      const [xy, z, attrs] = arrays("float64", "cpu") as [Array, Array, Array];
      const Ls = (s: Array) => L(np.add(xy, s), z, attrs);
      const s0 = np.array([0.01, -0.02], { dtype: "float64", backend: "cpu" });
      const Hm = globalThis.Array.from((hessian(Ls)(s0) as Array).dataSync(), Number); // [2, 2]
      const g = (s: Array) => globalThis.Array.from((grad(Ls)(s) as Array).dataSync(), Number);
      const h = 1e-5;
      const fd = [0, 1].flatMap((j) => {
        const e = np.array(j === 0 ? [h, 0] : [0, h], { dtype: "float64", backend: "cpu" });
        const p = g(np.add(s0, e)),
          m = g(np.sub(s0, e));
        return p.map((a, i) => (a - m[i]!) / (2 * h));
      }); // column j of the Hessian, transposed: fd[2j + i] = H[i][j]
      const want = [fd[0]!, fd[2]!, fd[1]!, fd[3]!];
      expect(relErr(Hm, want), `${kind}: hessian vs differences of gradients`).toBeLessThan(1e-6);
      expect(Math.abs(Hm[1]! - Hm[2]!), `${kind}: symmetric`).toBeLessThan(1e-9 * maxAbs(Hm));
    }
  });
});
