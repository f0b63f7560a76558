// Whisper's log-mel front end as published in preprocessor_config.json: `mel_filters` is a
// [feature_size][n_fft / 2 + 1] matrix of Slaney-normalised triangular filters on the Slaney mel
// scale from 0 Hz to 8 kHz (what librosa.filters.mel(sr=16000, n_fft=400, n_mels=…) gives, and what
// OpenAI ships for 80 and 128 bins). Used to give a config another bin count (large-v3 uses 128)
// with filters that match it.
import { readFile, writeFile, chmod, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Slaney's mel scale: linear (200/3 Hz per mel) below 1 kHz, logarithmic above. */
const LINEAR_HZ_PER_MEL = 200 / 3;
const BREAK_HZ = 1000;
const BREAK_MEL = BREAK_HZ / LINEAR_HZ_PER_MEL;
const LOG_STEP = Math.log(6.4) / 27;

export function hzToMel(hz: number): number {
  return hz < BREAK_HZ ? hz / LINEAR_HZ_PER_MEL : BREAK_MEL + Math.log(hz / BREAK_HZ) / LOG_STEP;
}

export function melToHz(mel: number): number {
  return mel < BREAK_MEL ? mel * LINEAR_HZ_PER_MEL : BREAK_HZ * Math.exp(LOG_STEP * (mel - BREAK_MEL));
}

export interface MelOptions {
  readonly bins: number;
  readonly nFft?: number;
  readonly samplingRate?: number;
  readonly maxHz?: number;
}

/** The filter bank, one row of `nFft / 2 + 1` weights per mel bin. */
export function slaneyMelFilters({
  bins,
  nFft = 400,
  samplingRate = 16000,
  maxHz = 8000,
}: MelOptions): number[][] {
  const frequencies = Math.floor(nFft / 2) + 1;
  const fftHz = Array.from({ length: frequencies }, (_, i) => (i * samplingRate) / nFft);
  const top = hzToMel(maxHz);
  // bins + 2 edges, evenly spaced in mel: filter m rises from edge m to m+1 and falls to m+2.
  const edges = Array.from({ length: bins + 2 }, (_, i) => melToHz((top * i) / (bins + 1)));
  return Array.from({ length: bins }, (_, m) => {
    const [lower, centre, upper] = [edges[m]!, edges[m + 1]!, edges[m + 2]!];
    const area = 2 / (upper - lower);
    return fftHz.map((hz) => {
      const rising = (hz - lower) / (centre - lower);
      const falling = (upper - hz) / (upper - centre);
      return Math.max(0, Math.min(rising, falling)) * area;
    });
  });
}

/**
 * Gives the Whisper folder `dir` another mel bin count, as a checkpoint of that kind would publish
 * it: preprocessor_config.json's `feature_size` and `mel_filters` (computed here) and config.json's
 * `num_mel_bins`. Everything else in both files stays as it was.
 */
export async function setMelBins(dir: string, bins: number): Promise<void> {
  await chmod(dir, 0o755);
  const rewrite = async (file: string, change: (json: Record<string, unknown>) => void): Promise<void> => {
    const path = join(dir, file);
    const json = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
    change(json);
    await rm(path, { force: true });
    await writeFile(path, `${JSON.stringify(json, null, 2)}\n`);
  };
  await rewrite('preprocessor_config.json', (p) => {
    p['feature_size'] = bins;
    p['mel_filters'] = slaneyMelFilters({
      bins,
      nFft: typeof p['n_fft'] === 'number' ? p['n_fft'] : 400,
      samplingRate: typeof p['sampling_rate'] === 'number' ? p['sampling_rate'] : 16000,
    });
  });
  await rewrite('config.json', (c) => {
    c['num_mel_bins'] = bins;
  });
}
