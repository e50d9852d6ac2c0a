/** The REST server's own version, reported by GET /v1/version as `rest-version`. */
export const REST_VERSION = '0.1.0';
