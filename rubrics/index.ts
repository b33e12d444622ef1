import fs from 'node:fs';
import path from 'node:path';
import type { LoadedRubric, ProtocolModule } from '../core/model/protocol';
import { InputError } from '../core/model/inputError';
import { cabProtocol } from './cab';
import { latticeProtocol } from './lattice';
import { pairwiseProtocol } from './pairwise';

/** Every protocol judgeflow knows. Adding one is a folder here plus a line in this list. */
export const protocols: ProtocolModule[] = [latticeProtocol, cabProtocol, pairwiseProtocol];

/** A run config's `rubric:`: a rubric directory, or a rubric built from a reference harness's file. */
export type RubricSpec = string | { from: string; file?: string };

/** The rubric a config names: its directory, a reference rubric the protocol registers, or the protocol's default. */
export function loadConfiguredRubric(protocol: ProtocolModule, spec: RubricSpec | undefined): LoadedRubric {
  if (spec === undefined) return protocol.loadRubric(protocol.defaultRubricDir);
  if (typeof spec === 'string') return protocol.loadRubric(spec);
  const known = Object.keys(protocol.referenceRubrics ?? {});
  const builder = protocol.referenceRubrics?.[spec.from];
  if (!builder)
    throw new InputError(
      `rubric: { from: ${spec.from} } is not a reference rubric of protocol ${protocol.id}; ${known.length ? `known: ${known.join(', ')}` : 'it has none'}`,
    );
  const file = path.resolve(spec.file ?? builder.defaultFile);
  if (!fs.existsSync(file))
    throw new InputError(
      `rubric: { from: ${spec.from} } needs ${builder.describe} at ${file}, which does not exist; fetch it with judgeflow dataset fetch ${protocol.id}, or set rubric.file to where a copy is`,
    );
  return builder.build(file);
}

/** Where a config's rubric comes from, for messages. */
export const rubricSpecText = (protocol: ProtocolModule, spec: RubricSpec | undefined) =>
  spec === undefined
    ? protocol.defaultRubricDir
    : typeof spec === 'string'
      ? spec
      : `rubric: { from: ${spec.from}${spec.file ? `, file: ${spec.file}` : ''} }`;

export function protocolFor(id: string): ProtocolModule {
  const found = protocols.find((p) => p.id === id);
  if (!found) throw new InputError(`unknown protocol "${id}"; known: ${protocols.map((p) => p.id).join(', ')}`);
  return found;
}
