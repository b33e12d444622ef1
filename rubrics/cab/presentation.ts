/** The balanced presentation design lives in core/model/presentation.ts: LATTICE's joint judging orders its answers with it too. */
export * from '../../core/model/presentation';
