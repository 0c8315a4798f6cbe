/**
 * @since 0.1.0
 */
export * as McpError from "./McpError.js"

/**
 * @since 0.1.0
 */
export * as McpSchema from "./McpSchema.js"

/**
 * @since 0.1.0
 */
export * as StdioTransport from "./StdioTransport.js"

/**
 * @since 0.1.0
 */
export * as Transport from "./Transport.js"
