// Transformers.js reads models through one process-wide `env`: set it once, to local files only.
import { env } from '@huggingface/transformers';

let configuredDir: string | undefined;

/**
 * Points Transformers.js at one capability folder of the model repository and forbids any
 * network access (no model is ever fetched at run time). A process serves one
 * capability, so a second call with another folder is a programming error.
 */
export function useLocalModels(capabilityDir: string): void {
  if (configuredDir !== undefined && configuredDir !== capabilityDir) {
    throw new Error(`Transformers.js already reads models from ${configuredDir}`);
  }
  configuredDir = capabilityDir;
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = capabilityDir.endsWith('/') ? capabilityDir : `${capabilityDir}/`;
  // Nothing may be written beside the models either (read-only root filesystem in the chart).
  env.useFSCache = false;
}
