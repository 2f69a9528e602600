/** The memory soak the default `npm run bench` runs (bench/soak.ts, fit60) and its table in the summary. */
import { describe, expect, it } from "vitest";
import { soak } from "../bench/soak.js";
import { soakMarkdown } from "../bench/summary.js";

describe("bench soak", () => {
  it("samples memory along the 60-frame fit and tabulates peak, range and growth", async () => {
    const row = await soak("cpu", 20, 2, () => {}, "fit60");
    expect(row).toMatchObject({ workload: "soak", kind: "fit60", backend: "cpu", steps: 20 });
    expect(row.samples.map((s) => s.step)).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18, 20]);
    // A 20-step run's warm-up is its first fifth.
    expect(row.warmUp).toBe(4);
    for (const s of row.samples) expect(s.rssMB).toBeGreaterThan(s.heapMB);
    expect(row.peakRssMB).toBeGreaterThanOrEqual(Math.max(...row.samples.map((s) => s.rssMB)));
    expect(Number.isFinite(row.rssSlope) && Number.isFinite(row.heapSlope)).toBe(true);
    const md = soakMarkdown([row]).split("\n");
    const line = md.find((l) => l.startsWith("| fit60 | cpu | 20 |"))!;
    expect(line).toBeDefined();
    const rss = row.samples.filter((s) => s.step >= 4).map((s) => s.rssMB);
    expect(line).toContain(`| ${row.peakRssMB} | ${Math.min(...rss).toFixed(0)}–${Math.max(...rss).toFixed(0)} |`);
  }, 120_000);
});
