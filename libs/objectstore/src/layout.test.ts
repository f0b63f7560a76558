import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  captureFileName,
  imageKey,
  imageKeyOfFile,
  inputKey,
  inputPrefix,
  newImageId,
  pdfFileName,
  pdfKey,
  pdfKeyOfFile,
  posterKey,
  screenshotKey,
  screenshotKeyOfFile,
  videoKey,
  videoKeyOfFile,
} from './layout.js';

test('images: built keys parse back from their served file names', () => {
  const id = newImageId();
  assert.match(id, /^img-[0-9a-f-]{36}$/);
  assert.equal(imageKey(id), `images/${id}.png`);
  assert.equal(imageKeyOfFile(`${id}.png`), imageKey(id));
  for (const bad of [
    'img-a.PNG',
    'img-a.png.exe',
    'img-a/b.png',
    'img-a_b.png',
    'a.png',
    '../img-a.png',
    'img-.png',
  ]) {
    assert.equal(imageKeyOfFile(bad), null, bad);
  }
  assert.equal(imageKeyOfFile(`img-${'a'.repeat(64)}.png`), `images/img-${'a'.repeat(64)}.png`);
  assert.equal(imageKeyOfFile(`img-${'a'.repeat(65)}.png`), null);
});

test('videos and posters: built keys parse back, with which one it is', () => {
  assert.equal(videoKey('job-x1'), 'videos/job-x1.mp4');
  assert.equal(posterKey('job-x1'), 'videos/job-x1.jpg');
  assert.deepEqual(videoKeyOfFile('job-x1.mp4'), { key: videoKey('job-x1'), poster: false });
  assert.deepEqual(videoKeyOfFile('job-x1.jpg'), { key: posterKey('job-x1'), poster: true });
  for (const bad of [
    'job-x1.MP4',
    'job-x1.jpeg',
    'job-x1.png',
    'img-x1.png',
    'job-../x.mp4',
    'job-x1.mp4/',
  ]) {
    assert.equal(videoKeyOfFile(bad), null, bad);
  }
});

test('screenshots: capture names and keys', () => {
  const name = captureFileName(1_700_000_000_123);
  assert.equal(name, 'capture-1700000000123.png');
  assert.equal(screenshotKey('s1', name), 'screenshots/s1/capture-1700000000123.png');
  assert.equal(screenshotKeyOfFile('s1', name), screenshotKey('s1', name));
  for (const bad of [
    'capture-1.png',
    'capture-1700000000123.PNG',
    'capture-1700000000123.png.exe',
    '../meta',
  ]) {
    assert.equal(screenshotKeyOfFile('s1', bad), null, bad);
  }
});

test('PDFs: beside the screenshots of their session, and only their own names parse', () => {
  const name = pdfFileName(1_700_000_000_123);
  assert.equal(name, 'page-1700000000123.pdf');
  assert.equal(pdfKey('s1', name), 'screenshots/s1/page-1700000000123.pdf');
  assert.equal(pdfKeyOfFile('s1', name), pdfKey('s1', name));
  for (const bad of ['page-1.pdf', 'page-1700000000123.PDF', 'capture-1700000000123.png', '../meta']) {
    assert.equal(pdfKeyOfFile('s1', bad), null, bad);
  }
  // Neither parser takes the other's files.
  assert.equal(screenshotKeyOfFile('s1', name), null);
});

test('animation inputs live under one prefix per job', () => {
  assert.equal(inputPrefix('job-a'), 'animation-inputs/job-a/');
  assert.equal(inputKey('job-a', 'driving_video'), 'animation-inputs/job-a/driving_video');
  assert.ok(inputKey('job-a', 'audio').startsWith(inputPrefix('job-a')));
});
