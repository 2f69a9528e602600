/**
 * Rendering parameters ψ as differentiable inputs (RISP part 1, item 1): light direction, colour
 * and intensity, ambient level, albedo, specular strength and exponent, background colour and a
 * background image — forward mode (jvp, how RISP makes ∂I/∂ψ) against central differences in
 * float64, through render()'s default SoftRas path with Phong shading.
 */
import { describe, expect, it } from "vitest";
import { init, jvp, np, render, sysid, type Array } from "../src/index.js";

await init({ backend: "cpu" });

const ball = render.icosphereData(2, 0.6);
const camera = render.perspectiveCamera({ eye: [0.3, 0.4, -2.5], at: [0, 0, 0], fovY: 40, dtype: "float64" });
const R = 16;
const f64 = (x: unknown) => np.array(x, { dtype: "float64" });

/**
 * ψ = [ambient, light dir (3), light intensity, light colour (3), albedo (3), specular, shininess, background (3)]
 * (18).
 */
const PSI0 = [0.3, 0.4, 1, -0.5, 0.7, 1, 0.9, 0.8, 0.8, 0.5, 0.3, 0.4, 32, 0.1, 0.2, 0.3];
function image(psi: Array, backdrop: Array): Array {
  const at = (i: number, n = 1) => (n === 1 ? np.index(psi, i) : np.take(psi, np.arange(i, i + n), 0));
  const lights: render.Lights = {
    ambient: at(0),
    directional: [{ direction: at(1, 3), color: np.mul(at(4), at(5, 3)) }],
  };
  const mesh = {
    ...render.meshFromData(ball, { dtype: "float64" }),
    colors: at(8, 3),
    material: { specular: at(11), shininess: at(12) },
  };
  const rgba = render.render(mesh, camera, lights, undefined, {
    width: R,
    height: R,
    shading: "phong",
    softras: { sigma: 0.25 * (2 / R) ** 2, gamma: 0.05 },
  });
  // The background: a colour ψ[13..15] and an image behind it, composited over the premultiplied frame.
  return sysid.overBackground(sysid.premultiply(rgba), np.add(np.reshape(at(13, 3), [1, 1, 3]), backdrop), "rgb");
}

describe("rendering parameters ψ", () => {
  it("jvp of a render in every rendering parameter and the background image matches central differences", () => {
    const psi = f64(PSI0),
      backdrop = np.mul(
        0.2,
        f64(
          globalThis.Array.from({ length: R }, (_, r) =>
            globalThis.Array.from({ length: R }, (_, c) => [Math.sin(r), Math.cos(c), 0.5]),
          ),
        ),
      );
    const h = 1e-6;
    for (let k = 0; k < PSI0.length; k++) {
      const e = f64(PSI0.map((_, i) => (i === k ? 1 : 0)));
      const [, t] = jvp((p: Array) => image(p, backdrop), [psi], [e]) as [Array, Array];
      const fd = np.div(
        np.sub(image(np.add(psi, np.mul(h, e)), backdrop), image(np.sub(psi, np.mul(h, e)), backdrop)),
        2 * h,
      );
      const err = np.max(np.abs(np.sub(t, fd))).item(),
        size = np.max(np.abs(fd)).item();
      expect(size, `ψ[${k}] moves the image`).toBeGreaterThan(1e-4);
      expect(err, `ψ[${k}]`).toBeLessThan(1e-5 * Math.max(1, size));
    }
    // The background image: ∂I/∂backdrop is 1 − alpha per pixel.
    const [, tb] = jvp((b: Array) => image(psi, b), [backdrop], [np.onesLike(backdrop)]) as [Array, Array];
    const alpha = np.split(
      render.render({ ...render.meshFromData(ball, { dtype: "float64" }) }, camera, undefined, undefined, {
        width: R,
        height: R,
        softras: { sigma: 0.25 * (2 / R) ** 2, gamma: 0.05 },
      }),
      [3],
      -1,
    )[1]!;
    expect(np.max(np.abs(np.sub(tb, np.sub(1, alpha)))).item()).toBeLessThan(1e-12);
  });
});
