/**
 * @since 0.1.0
 */
export * as McpServer from "./McpServer.js"

/**
 * @since 0.1.0
 */
export * as McpServerHttp from "./McpServerHttp.js"

/**
 * @since 0.1.0
 */
export * as TestServer from "./TestServer.js"
