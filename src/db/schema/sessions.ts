/** D1 tables of the sessions area. */
export {};
