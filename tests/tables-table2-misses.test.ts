/**
 * Under Table 2, the objects whose μ the pixels miss, and how many of those the 3-D states miss too
 * (`table2Misses`, examples/lib/tables.ts).
 */
import { describe, expect, it } from "vitest";
import type { sysid } from "../src/index.js";
import { table2Misses } from "../examples/lib/tables.js";

const record = (index: number, describe: string, pixels: number, states: number): sysid.InstanceRecord => ({
  index,
  describe,
  initialRelMae: { mu: 0.5 },
  relMae: { gradsim: { mass: 1e-5, mu: pixels }, diffphysics: { mass: 1e-5, mu: states } },
  meanAbsError: {},
  iterations: {},
  seconds: {},
});

const report = (records: sysid.InstanceRecord[]) =>
  ({ dataset: { task: "rigid-contact", instances: records.length, records } }) as never;

describe("table2Misses", () => {
  it("counts μ's misses from the pixels and, of those, the ones the 3-D states share", () => {
    const line = table2Misses(
      report([
        record(0, "cone 0.5×0.6×0.6, truth …", 1e-5, 1e-5),
        record(1, "icosphere 0.9×0.8×0.8, truth …", 0.45, 1.3e-3),
        record(2, "icosphere 0.7×0.9×0.8, truth …", 1.97, 1.26),
        record(3, "box 0.6×0.8×0.8, truth …", 0.035, 0.11),
      ]),
    );
    expect(line).toBe(
      "Per object, μ more than 1% off from the pixels (∇Sim): 3 of 4 (icosphere, box); the 3-D states (DiffPhysics) " +
        "miss it by more than 1% on 2 of those (icosphere, box): their motion barely depends on μ.",
    );
  });

  it("says none where none misses, and nothing for runs without per-object records", () => {
    expect(table2Misses(report([record(0, "box …", 1e-4, 1e-4)]))).toBe(
      "Per object, μ more than 1% off from the pixels (∇Sim): 0 of 1.",
    );
    expect(table2Misses(null)).toBe("");
    expect(table2Misses({ dataset: 50 })).toBe("");
  });
});
