import { emptyState, type EmptyState, type GradientTransformation } from "./base.js";

/** Pass updates through unchanged (a placeholder link in a chain). */
export const identity = (): GradientTransformation<EmptyState> => ({
  init: () => emptyState(),
  update: (updates, state) => [updates, state],
});
