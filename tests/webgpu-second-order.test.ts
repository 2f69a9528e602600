/**
 * Second derivatives through the fused rasterizers on WebGPU (float32): Hessian-vector products
 * (jvp of grad) of SoftRas (the colour kernel) and DIB-R (textured) against the
 * CPU's float64 values (tests/render-second-order.test.ts checks those against central differences).
 */
import { expect, it } from "vitest";
import { arrays, direction, GPU_SIZE, host, hostAsync, hvp, KINDS, lossOf, relErr } from "./second-order-helpers.js";
import { describeGpu } from "./webgpu-helpers.js";

describeGpu("second derivatives through the fused rasterizers (WebGPU, float32)", () => {
  // The layered, textured SoftRas is checked on the CPU only: eagerly on lavapipe its second-order
  // program compiles for about two minutes (the other two: half a minute each).
  for (const kind of KINDS.filter((k) => k !== "softras layered, textured")) {
    it(`${kind}: jvp(grad) on the device agrees with the CPU's float64`, async () => {
      const cpu = arrays("float64", "cpu", GPU_SIZE);
      const want = host(hvp(lossOf(kind, "float64", "cpu", GPU_SIZE), cpu, direction(cpu, "cpu")));
      const xs = arrays("float32", "webgpu", GPU_SIZE);
      const got = await hostAsync(hvp(lossOf(kind, "float32", "webgpu", GPU_SIZE), xs, direction(xs, "webgpu")));
      expect(relErr(got, want), "float32 on webgpu vs float64 on the CPU").toBeLessThan(2e-3);
    });
  }
});
