/** The balanced presentation design lives in core/presentation.ts: LATTICE's joint judging orders its answers with it too. */
export * from '../../core/presentation';
