/** A JSON value: what every input, output, event payload and state value must be. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
