/**
 * The elementwise primitives' WGSL lowerings against their CPU implementations, driven by the
 * spec table's cases: each case runs on webgpu in float32 (eagerly and jitted) and on the CPU
 * in float64 at the same (float32-rounded) inputs; for differentiable specs the gradient of a
 * weighted sum too, so the jvp rules' compositions run on the device as well.
 */
import fc from "fast-check";
import { it } from "vitest";
import type { Array } from "../src/core/array.js";
import { fromTyped } from "../src/core/create.js";
import { grad, jit, np } from "../src/index.js";
import { describeGpu, expectMatch } from "../tests/webgpu-helpers.js";
import { elementwiseSpecs } from "./specs-elementwise.js";
import type { PrimCase, PrimSpec } from "./spec-types.js";

/** Float32 lowerings (WGSL built-ins, helper approximations) against float64: relative to the output's scale. */
const TOL = { rtol: 2e-5, atol: 2e-6 };
const GRAD_TOL = { rtol: 1e-4, atol: 1e-5 };

const onBackend = (c: PrimCase, backend: "cpu" | "webgpu"): Array[] =>
  c.inputs.map((t) => {
    const f32 = Float32Array.from(t.data);
    return backend === "webgpu"
      ? fromTyped(f32, t.shape, "float32", { backend })
      : fromTyped(Float64Array.from(f32), t.shape, "float64", { backend });
  });

/** A scalar loss of apply's output with non-uniform cotangents (cos y − y sin y). */
const weightedSum =
  (c: PrimCase) =>
  (...xs: Array[]): Array => {
    const y = c.apply(...xs);
    return np.sum(np.mul(y, np.cos(y)));
  };

async function checkCase(spec: Exclude<PrimSpec, { kind: "covered-elsewhere" }>, c: PrimCase): Promise<void> {
  const g = onBackend(c, "webgpu"),
    h = onBackend(c, "cpu");
  const want = c.apply(...h);
  await expectMatch(c.apply(...g), want, TOL, `${c.label} eager`);
  await expectMatch(jit((...xs: Array[]) => c.apply(...xs))(...g), want, TOL, `${c.label} jit`);
  if (spec.kind !== "differentiable") return;
  const argnums = c.inputs.map((_, i) => i);
  const gg = grad(weightedSum(c), { argnums })(...g) as Array[];
  const gh = grad(weightedSum(c), { argnums })(...h) as Array[];
  for (let i = 0; i < gg.length; i++) await expectMatch(gg[i]!, gh[i]!, GRAD_TOL, `${c.label} grad ${i}`);
}

const entries = Object.entries(elementwiseSpecs)
  .flatMap(([name, s]) => (globalThis.Array.isArray(s) ? s : [s]).map((x) => [name, x] as const))
  // select, casts and the bool ops build float64 or bool operands inside their cases (tests/webgpu-eager.test.ts covers
  // them).
  .filter(
    ([name, s]) =>
      s.kind !== "covered-elsewhere" && !["convert_element_type", "select", "not", "and", "or"].includes(name),
  );

describeGpu("elementwise primitives: webgpu (float32) vs cpu (float64)", () => {
  for (const [name, spec] of entries) {
    const s = spec as Exclude<PrimSpec, { kind: "covered-elsewhere" }>;
    it(name, async () => {
      await fc.assert(
        fc.asyncProperty(s.cases, (c) => checkCase(s, c)),
        { numRuns: 3 },
      );
    });
  }
});
