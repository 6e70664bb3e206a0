/** Types of scripts/agents-registry.mjs (imported by next.config.ts, vitest.config.ts and tests). */
export declare const CONFIG_FILE: string;
export declare const GENERATED_FILE: string;
export declare function isPathSpecifier(specifier: string): boolean;
export declare function readAgentConfig(root?: string): string[];
export declare function registryText(root: string, specifiers: string[]): string;
export declare function writeAgentRegistry(root?: string): string[];
export declare function agentNpmPackages(root?: string): string[];
