/** All first-order primitives and their lax-level wrappers (operands already share a dtype). */
export * from "./elementwise.js";
export * from "./reduce.js";
export * from "./movement.js";
export * from "./indexing.js";
export * from "./linalg.js";
export * from "./literal.js";
