/**
 * @since 0.1.0
 */
export * as RedisKeyValueStore from "./RedisKeyValueStore.js"
