/**
 * Test files in an order that keeps both of the CI machine's cores busy to the end: the slowest files (measured,
 * minutes each) first, then vitest's own order (its cache of durations, or the larger file first on a fresh clone,
 * where the slowest file had started last and run alone for its last five minutes).
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

const SLOWEST_FIRST = [
  "tests/experiments-risp-tasks.test.ts",
  "tests/experiments-outside.test.ts",
  "tests/experiments-risp.test.ts",
  "tests/experiments-imperfect.test.ts",
  "tests/web-page.test.ts",
  "tests/experiments-rigid.test.ts",
  "tests/reproduce.test.ts",
];

export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (s: TestSpecification) => {
      const k = SLOWEST_FIRST.findIndex((name) => s.moduleId.endsWith(`/${name}`));
      return k < 0 ? SLOWEST_FIRST.length : k;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
