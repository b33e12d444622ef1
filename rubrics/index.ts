import type { ProtocolModule } from '../core/protocol';
import { InputError } from '../core/inputError';
import { cabProtocol } from './cab';
import { latticeProtocol } from './lattice';
import { pairwiseProtocol } from './pairwise';

/** Every protocol judgeflow knows. Adding one is a folder here plus a line in this list. */
export const protocols: ProtocolModule[] = [latticeProtocol, cabProtocol, pairwiseProtocol];

export function protocolFor(id: string): ProtocolModule {
  const found = protocols.find((p) => p.id === id);
  if (!found) throw new InputError(`unknown protocol "${id}"; known: ${protocols.map((p) => p.id).join(', ')}`);
  return found;
}
