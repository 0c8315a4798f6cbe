/**
 * @since 0.1.0
 */
export * as ElicitationHandler from "./ElicitationHandler.js"

/**
 * @since 0.1.0
 */
export * as HttpTransport from "./HttpTransport.js"

/**
 * @since 0.1.0
 */
export * as InProcessTransport from "./InProcessTransport.js"

/**
 * @since 0.1.0
 */
export * as McpClient from "./McpClient.js"

/**
 * @since 0.1.0
 */
export * as McpError from "./McpError.js"

/**
 * @since 1.0.0
 */
export * as McpMethod from "./McpMethod.js"

/**
 * @since 0.1.0
 */
export * as McpPromiseClient from "./McpPromiseClient.js"

/**
 * @since 0.1.0
 */
export * as McpSchema from "./McpSchema.js"

/**
 * @since 0.1.0
 */
export * as McpTasks from "./McpTasks.js"

/**
 * @since 0.1.0
 */
export * as TaskStore from "./TaskStore.js"

/**
 * @since 0.1.0
 */
export * as RootsProvider from "./RootsProvider.js"

/**
 * @since 0.1.0
 */
export * as SamplingHandler from "./SamplingHandler.js"

/**
 * @since 0.1.0
 */
export * as StdioTransport from "./StdioTransport.js"

/**
 * @since 0.1.0
 */
export * as Transport from "./Transport.js"

/**
 * @since 0.1.0
 */
export * as AuthorizationHandler from "./AuthorizationHandler.js"

/**
 * @since 0.1.0
 */
export * as OAuth from "./OAuth.js"

/**
 * @since 0.1.0
 */
export * as TokenStore from "./TokenStore.js"

/**
 * @since 0.1.0
 */
export * as HostResolver from "./HostResolver.js"

/**
 * @since 0.1.0
 */
export * as ResultCache from "./ResultCache.js"

/**
 * @since 0.1.0
 */
export * as JsonSchema from "./JsonSchema.js"

/**
 * @since 0.1.0
 */
export * as Skills from "./Skills.js"

/**
 * @since 0.1.0
 */
export * as TypedTool from "./TypedTool.js"

/**
 * @since 1.0.0
 */
export * as ToolResult from "./ToolResult.js"

/**
 * @since 0.1.0
 */
export * as McpHub from "./McpHub.js"

/**
 * @since 0.1.0
 */
export * as ExtensionHandler from "./ExtensionHandler.js"

/**
 * @since 0.2.0
 */
