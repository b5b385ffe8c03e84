/** Milliseconds since the epoch; injected so tests can move time (a rolled key's grace period, a refill's period). */
export type Clock = () => number;
