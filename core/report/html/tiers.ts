/**
 * Separability tiers, when report.json carries a `separability` block: copilot → tier label. Accepts the
 * shapes a tiering can reasonably take (a list of tiers, each a list of names or {copilots}; or a map of
 * name → tier), and `copilots.<name>.tier`; null when there is none.
 */
export function separabilityTiers(report: Record<string, unknown>): Record<string, string> | null {
  const out: Record<string, string> = {};
  const sep = report.separability as Record<string, unknown> | undefined;
  const label = (i: number) => String.fromCharCode(65 + i);
  const tiers = sep && (Array.isArray(sep) ? sep : sep.tiers);
  if (Array.isArray(tiers)) {
    tiers.forEach((t, i) => {
      const members = Array.isArray(t)
        ? t
        : ((t as { copilots?: unknown; systems?: unknown; members?: unknown })?.copilots ??
          (t as any)?.systems ??
          (t as any)?.members);
      const name = (t as { tier?: unknown; label?: unknown })?.label ?? (t as { tier?: unknown })?.tier;
      if (Array.isArray(members))
        for (const m of members) out[String(m)] = name !== undefined && !Array.isArray(t) ? String(name) : label(i);
    });
  } else if (tiers && typeof tiers === 'object') {
    for (const [name, t] of Object.entries(tiers as Record<string, unknown>))
      out[name] = typeof t === 'number' ? label(t - 1) : String(t);
  }
  for (const group of ['copilots', 'systems']) {
    const items = report[group] as Record<string, { tier?: unknown }> | undefined;
    if (items && typeof items === 'object')
      for (const [name, x] of Object.entries(items))
        if (x && x.tier !== undefined && x.tier !== null)
          out[name] = typeof x.tier === 'number' ? label(x.tier - 1) : String(x.tier);
  }
  return Object.keys(out).length ? out : null;
}
