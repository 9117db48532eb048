/**
 * Ties a zod schema to a TypeScript type written elsewhere, so that neither can change without
 * the other: the API document is generated from schemas, and the code builds values of types.
 */
import type * as z from 'zod';

/** `T` with every array and property readonly, all the way down: what the code hands out. */
export type DeepReadonly<T> = T extends (infer E)[] | readonly (infer E)[]
  ? readonly DeepReadonly<E>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** The value a schema describes, as the code builds it: readonly, as the code's own types are. */
export type Output<S extends z.ZodType> = DeepReadonly<z.output<S>>;

/**
 * `unknown` when `A` (the schema's) and `B` (the type) have the same keys and are assignable both
 * ways, readonly aside; otherwise a type naming the mismatch. The keys are compared too, as an
 * optional field one side lacks would not stop assignability.
 */
type Matches<A, B> = [DeepReadonly<A>, keyof A] extends [DeepReadonly<B>, keyof B]
  ? [DeepReadonly<B>, keyof B] extends [DeepReadonly<A>, keyof A]
    ? unknown
    : { readonly 'the schema lacks a field of the type, or differs in one': B }
  : { readonly 'the schema has a field the type lacks, or differs in one': A };

/**
 * A schema of objects of type `T`: `schemaOf<T>()(z.strictObject({…}))` fails to type-check when a
 * field is added to, removed from or changed in either. Curried, so that `T` is named and the
 * schema's own type is inferred.
 */
export function schemaOf<T extends object>() {
  return <S extends z.ZodType>(schema: S & Matches<z.output<S>, T>): S => schema;
}
