export { jvp, vjp, linearize, grad, valueAndGrad, jacfwd, jacrev, hessian, type GradOptions } from "./vjp.js";
export { vmap, type VmapOptions } from "./vmap.js";
export { customVjp, checkpoint } from "./custom.js";
