/** The contract checks of an artifact contract: required files exist, JSON parses, schema holds, headings present. */
import type { ArtifactContract, StopValidator, ValidationIssue } from '../../runtime/agent.js';
import { checkArtifactText } from '../../tools/artifact-contract-checks.js';

export function contractValidator(contracts: ArtifactContract[]): StopValidator<unknown> {
  return {
    name: 'ArtifactContract',
    async validate(ctx) {
      const issues: ValidationIssue[] = [];
      for (const c of contracts) {
        let textValue: string;
        try {
          textValue = await ctx.workspace.readText(`artifacts/${c.path}`);
        } catch {
          if (c.required) issues.push({ check: 'required_output', path: c.path, message: `required artifact ${c.path} was not created` });
          continue;
        }
        issues.push(...checkArtifactText(c, textValue));
      }
      return issues;
    },
  };
}
