#!/usr/bin/env node
// Placeholder entry until the CLI lands (issue 3).
console.log('runtrail: CLI not built yet');
