#!/usr/bin/env node
// `models-dev <command> <dir> [--seed N]`: writes a tiny random-weight model folder.
//   build-llm      a Llama-family decoder (text generation)
//   build-whisper  a Whisper encoder-decoder (speech recognition)
//   build-whisper-from-config  random weights for a published Whisper folder already in <dir>
//                  (its tokenizer and configs as published; only the dimensions made small)
//   build-diffusion  a Stable-Diffusion-style pipeline (text to image, diffusers ONNX layout)
//   build-video-diffusion  a Stable-Video-Diffusion-style pipeline (image to video)
//   build-portrait  a LivePortrait-style ONNX set with an audio-to-motion model
// Workers call this at start-up to fill an empty model repository for development.
import { parseArgs } from 'node:util';
import { buildTinyDiffusion } from './diffusion/build.js';
import { buildTinyLlama } from './llama/build.js';
import { buildTinyPortrait } from './portrait/build.js';
import { buildTinyVideoDiffusion } from './video-diffusion/build.js';
import { buildTinyWhisper } from './whisper/build.js';
import { buildWhisperFromConfig } from './whisper/from-config.js';

interface Built {
  readonly files: ReadonlyMap<string, Uint8Array>;
  /** What was built, for the one-line report: "llama, 2 layers, hidden 32, …". */
  readonly summary: string;
}

const COMMANDS: Record<string, (dir: string, seed: number) => Promise<Built>> = {
  'build-llm': async (dir, seed) => {
    const { shape, files } = await buildTinyLlama(dir, { seed });
    return {
      files,
      summary: `llama, ${shape.layers} layers, hidden ${shape.hiddenSize}, vocab ${shape.vocabSize}`,
    };
  },
  'build-whisper': async (dir, seed) => {
    const { shape, files } = await buildTinyWhisper(dir, { seed });
    return {
      files,
      summary:
        `whisper, ${shape.encoderLayers}+${shape.decoderLayers} layers, d_model ${shape.dModel}, ` +
        `vocab ${shape.vocabSize}`,
    };
  },
  'build-whisper-from-config': async (dir, seed) => {
    const { shape, files } = await buildWhisperFromConfig(dir, { seed });
    return {
      files,
      summary:
        `whisper on the published configs in ${dir}, ${shape.encoderLayers}+${shape.decoderLayers} layers, ` +
        `d_model ${shape.dModel}, ${shape.melBins} mel bins, vocab ${shape.vocabSize}`,
    };
  },
  'build-diffusion': async (dir, seed) => {
    const { shape, files } = await buildTinyDiffusion(dir, { seed });
    return {
      files,
      summary:
        `diffusion, text hidden ${shape.textHidden}, unet channels ${shape.unetChannels.join('/')}, ` +
        `vocab ${shape.vocabSize}`,
    };
  },
  'build-video-diffusion': async (dir, seed) => {
    const { shape, files } = await buildTinyVideoDiffusion(dir, { seed });
    return {
      files,
      summary: `video diffusion, ${shape.framesPerPass} frames per pass, ${shape.sampleSize * 8}px native`,
    };
  },
  'build-portrait': async (dir, seed) => {
    const { shape, files } = await buildTinyPortrait(dir, { seed });
    return {
      files,
      summary: `LivePortrait set, ${shape.keypoints} keypoints, ${shape.outputSize}px output`,
    };
  },
};

const USAGE = Object.keys(COMMANDS)
  .map((name, i) => `${i === 0 ? 'usage:' : '      '} models-dev ${name} <dir> [--seed N]`)
  .join('\n');

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { seed: { type: 'string', default: '0' } },
  });
  const [command = '', dir, ...rest] = positionals;
  const build = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  const seed = Number(values.seed);
  if (build === undefined || dir === undefined || rest.length > 0 || !Number.isSafeInteger(seed)) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const { files, summary } = await build(dir, seed);
  const bytes = [...files.values()].reduce((n, f) => n + f.byteLength, 0);
  process.stdout.write(
    `wrote a tiny random-weight development model (${summary}, seed ${seed}, ${bytes} bytes) to ${dir}\n`,
  );
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`models-dev: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
