/** gradsim.networks in the Node entry: the library, plus checkpoint files (node.ts). */
export * from "./index.js";
export * from "./node.js";
