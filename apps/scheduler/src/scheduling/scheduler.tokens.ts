/** Injection tokens of the scheduler's ports (fakes replace them in unit tests). */
export const SLICE_STATE_STORE = Symbol('SLICE_STATE_STORE');
export const SLICE_PUBLISHER = Symbol('SLICE_PUBLISHER');
