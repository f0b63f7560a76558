// Wiring only: which method of the image service answers which RPC.
import { defineService, type ServiceRegistration } from '@switchboard/grpc';
import type { ImageService } from './images/service.js';

export function diffusionService(images: ImageService): ServiceRegistration {
  return defineService('Diffusion', {
    GenerateImage: (request, ctx) => images.generate(request, ctx),
    ListModels: async () => images.listModels(),
  });
}
