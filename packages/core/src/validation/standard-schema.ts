// The Standard Schema interface (v1, https://standardschema.dev), declared here as the spec invites
// so that Cairn depends on no package for it: zod (3.24+), valibot (1.0+), ArkType (2.0+) and every
// other library that implements it fit as they are.

/** A schema that validates a value and may transform it: the Standard Schema v1 interface. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  /** The Standard Schema properties. */
  readonly '~standard': StandardSchemaV1.Props<Input, Output>;
}

// A namespace, as the spec's own declaration: users know these as StandardSchemaV1.Issue, StandardSchemaV1.InferOutput, ...
export declare namespace StandardSchemaV1 {
  /** The Standard Schema properties. */
  export interface Props<Input = unknown, Output = Input> {
    /** The version of the standard: 1. */
    readonly version: 1;
    /** The name of the library that made the schema. */
    readonly vendor: string;
    /** Validates a value: its (possibly transformed) value, or the issues found. May be async. */
    readonly validate: (value: unknown, options?: Options | undefined) => Result<Output> | Promise<Result<Output>>;
    /** The types the schema takes and gives (for inference only; absent at run time). */
    readonly types?: Types<Input, Output> | undefined;
  }

  /** Options a library may take in `validate`. */
  export interface Options {
    readonly libraryOptions?: Record<string, unknown> | undefined;
  }

  /** What `validate` returns. */
  export type Result<Output> = SuccessResult<Output> | FailureResult;

  /** A valid value: `value` is what to use from now on. */
  export interface SuccessResult<Output> {
    readonly value: Output;
    readonly issues?: undefined;
  }

  /** An invalid value and what is wrong with it. */
  export interface FailureResult {
    readonly issues: ReadonlyArray<Issue>;
  }

  /** One thing wrong with a value. */
  export interface Issue {
    readonly message: string;
    /** Where in the value, from its root. */
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined;
  }

  /** A step of an issue's path. */
  export interface PathSegment {
    readonly key: PropertyKey;
  }

  /** The types of a schema. */
  export interface Types<Input = unknown, Output = Input> {
    readonly input: Input;
    readonly output: Output;
  }

  /** What a schema takes. */
  export type InferInput<Schema extends StandardSchemaV1> = NonNullable<Schema['~standard']['types']>['input'];

  /** What a schema gives. */
  export type InferOutput<Schema extends StandardSchemaV1> = NonNullable<Schema['~standard']['types']>['output'];
}
