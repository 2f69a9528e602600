import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { SlowestFirst } from "./tests/slowest-first.js";

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  // The package's own name, as tsconfig.json's "paths" resolve it (examples import "gradsim", never ../src).
  resolve: {
    alias: [
      { find: /^gradsim$/, replacement: source("./src/index.ts") },
      { find: /^gradsim\/node$/, replacement: source("./src/node.ts") },
      { find: /^gradsim\/sysid\/node$/, replacement: source("./src/sysid/node-entry.ts") },
    ],
  },
  test: {
    include: ["tests/**/*.test.ts", "property-tests/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Vitest's default is one worker fewer than the cores: on the 2-core CI machine the files ran one at a time.
    maxWorkers: Number(process.env.GRADSIM_TEST_WORKERS ?? availableParallelism()),
    sequence: { sequencer: SlowestFirst },
    setupFiles: ["property-tests/setup.ts"],
    // Test files run side by side on the cores already: CPU kernels stay on one thread each (threads'
    // own tests set their counts; tests/wasm-kernels.test.ts).
    env: { GRADSIM_CPU_THREADS: process.env.GRADSIM_CPU_THREADS ?? "1" },
    reporters: ["default"],
  },
});
