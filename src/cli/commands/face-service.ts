import type { Command } from 'commander';
import { startFaceService } from '../../http/face-service.js';
import type { CliContext } from '../context.js';

export function faceServiceCommand(program: Command, cli: CliContext): void {
  program
    .command('face-service')
    .description('Serve the embedded face engine over HTTP, as the downstream FACE_SERVICE_URL names (PORT, HOST, FACE_WORKERS).')
    .action(async () => {
      const service = await startFaceService(cli.config());
      cli.io.stderr(`metered-search face service listening on ${service.url}\n`);
      await cli.untilStopSignal();
      await service.close();
    });
}
