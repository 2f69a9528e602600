/** gradsim.control in the Node entry: the library, plus its Node-only parts (node.ts). */
export * from "./index.js";
export * from "./node.js";
