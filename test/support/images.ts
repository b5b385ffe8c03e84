import sharp from 'sharp';

/** A plain picture with no face in it, `side` pixels square, as PNG. */
export function plainImage(side: number): Promise<Buffer> {
  return sharp({ create: { width: side, height: side, channels: 3, background: { r: 90, g: 140, b: 200 } } })
    .png()
    .toBuffer();
}

/** A valid PNG of 49 million plain pixels: about a second of decoding and scaling per search. */
export function slowImage(): Promise<Buffer> {
  return plainImage(7000);
}
