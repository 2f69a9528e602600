/**
 * fast-check seeding. Locally every run draws a fresh seed (more of the space gets explored over
 * time; a failure prints its seed and counterexample). In CI (CI=true) the seed is fixed so a
 * landing is judged on the same cases it was tested with; FC_SEED overrides either.
 */
import fc from "fast-check";

const fixed = process.env.FC_SEED ?? (process.env.CI === "true" ? "20261122" : undefined);
if (fixed !== undefined) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: Number(fixed) });
