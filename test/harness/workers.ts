/**
 * How many test files run at once. Each worker gets an AWS emulator of its own (reset between tests), so
 * parallel tests never see each other's cloud resources. Two cores: more workers only add contention.
 */
export const TEST_WORKERS = Math.max(1, Number(process.env.PORTICO_TEST_WORKERS ?? 3));
