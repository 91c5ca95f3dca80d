// Public API of runtrail. Each area appends its exports here.
export * from './events/diagnosis.js';
export * from './events/process-event.js';
export * from './events/agent-event.js';
export type * from './events/operation-reporter-types.js';
export type * from './tools/tool.js';
export type * from './providers/model-provider.js';
export type * from './runtime/business-plugin.js';
export type * from './runtime/run-service-types.js';
