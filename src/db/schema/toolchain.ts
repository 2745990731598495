/** D1 tables of the toolchain area. */
export {};
