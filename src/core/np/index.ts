/** The numpy-like namespace `np`; also installs the chainable Array methods. */
import { installArrayMethods } from "../array.js";
import * as convert from "./convert.js";
import * as create from "./create.js";
import * as indexing from "./indexing.js";
import * as linalg from "./linalg.js";
import * as math from "./math.js";
import * as reduce from "./reduce.js";
import * as shape from "./shape.js";
import { allclose, isclose } from "./compare.js";
import { atIndex } from "./at-index.js";
import { linalg as linalgNs } from "./linalg-decomp.js";
import { dynamicSlice, dynamicUpdateSlice } from "./slicing.js";
import { argsort, sort } from "./sort.js";

export const np = {
  array: convert.array,
  asarray: convert.asArray,
  ...create,
  ...math,
  ...reduce,
  ...shape,
  ...linalg,
  ...indexing,
  var: reduce.variance,
  isclose,
  allclose,
  dynamicSlice,
  dynamicUpdateSlice,
  sort,
  argsort,
  atIndex,
  /** numpy's linalg: solve, inv, det, slogdet, cholesky (batched over leading axes, differentiable). */
  linalg: linalgNs,
};
export type Np = typeof np;

installArrayMethods({
  ...math,
  ...reduce,
  ...shape,
  ...linalg,
  ...indexing,
  astype: math.astype,
  atIndex,
} as never);
