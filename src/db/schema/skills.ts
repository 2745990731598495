/** D1 tables of the skills area. */
export {};
