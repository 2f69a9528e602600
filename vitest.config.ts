import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // "gradsim" (the package importing itself, as web/ does) resolves to the sources through their "source" export.
  ssr: { resolve: { conditions: ["source", ...defaultServerConditions] } },
  test: {
    include: ["tests/**/*.test.ts", "property-tests/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    setupFiles: ["property-tests/setup.ts"],
    reporters: ["default"],
  },
});
