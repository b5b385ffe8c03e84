import { parentPort } from 'node:worker_threads';
import sharp from 'sharp';
import { describe, loadModels } from './describe.js';

/** One inference thread: loads the models, then describes the images it is sent, one at a time. */
const port = parentPort!;
await loadModels();
// The first inference of a thread is twice as slow as the rest: pay it here, on a blank image.
await describe(
  await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 128, g: 128, b: 128 } } })
    .png()
    .toBuffer(),
);
port.postMessage({ ready: true });
port.on('message', async (message: { id: number; image: Uint8Array }) => {
  try {
    port.postMessage({ id: message.id, result: await describe(Buffer.from(message.image.buffer, message.image.byteOffset, message.image.length)) });
  } catch (error) {
    port.postMessage({ id: message.id, error: (error as Error).message });
  }
});
