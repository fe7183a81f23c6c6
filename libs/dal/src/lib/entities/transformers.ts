import type { ValueTransformer } from 'typeorm';

/**
 * BIGINT ids as decimal strings. mysql2 (supportBigNumbers, bigNumberStrings: false) hands back a
 * number when the value is a safe integer and a string otherwise; ids are strings everywhere in TS.
 */
export const bigintString: ValueTransformer = {
  to: (v: string | null | undefined) => v,
  from: (v: string | number | null) => (v === null || v === undefined ? v : String(v)),
};

/** BIGINT epoch ms as a number: every epoch ms up to the year 285 616 is a safe integer. */
export const bigintNumber: ValueTransformer = {
  to: (v: number | null | undefined) => v,
  from: (v: string | number | null) => (v === null || v === undefined ? v : Number(v)),
};
