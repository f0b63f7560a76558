// The published model files (real trained Llamas, Whisper tokenizers and configs, a Stable
// Diffusion export layout) that some integration tests and benchmarks read in place: kept beside
// the checkout, never copied into it, `SWITCHBOARD_MODELS_DIR` to point elsewhere. A test that needs
// them passes `{ skip: needsPublishedModels('llm', 'stories260K') }` and is skipped, with that
// reason, where they are absent; a benchmark calls `requirePublishedModels(…)` and stops with it.
export {
  MODELS_DIR_VARIABLE,
  needsPublishedModels,
  publishedModelPath,
  publishedModelsDir,
  requirePublishedModels,
} from '@switchboard/models-dev/published-models';
