/** Where `runtrail serve` listens when no --host / --port is given (and so where the lines the CLI prints point). */
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 7777;
