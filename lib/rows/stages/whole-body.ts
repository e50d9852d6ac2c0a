/** A format stage run over rows already in hand (point and bulk gets): the bytes it writes, as one Buffer. */
import type { Transform } from 'node:stream';
import type { RowOut } from '../../model/types.js';

export async function wholeBody(stage: Transform, rows: readonly RowOut[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  stage.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => {
    stage.on('end', resolve);
    stage.on('error', reject);
  });
  stage.end(rows);
  await done;
  return Buffer.concat(chunks);
}
