/** The builtin plugins' JSON tool results: the tools layer's own (one definition). */
export { errorResult, okResult } from '../../tools/tool-result.js';
