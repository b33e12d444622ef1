/**
 * The simulated tool world: fixed crypto/DeFi facts that the simulator's tools (MCP over stdio and HTTP, plain HTTP)
 * answer from, so an agent copilot's tool results are the same on every run and tests know every figure in advance.
 * The figures are invented for the simulator (plausible, not market data); each fact names a `source` under
 * https://sim.judgeflow.invalid/ (a reserved domain that never resolves) and the time it is `asOf`.
 *
 * Figures are chosen so none repeats another kind's and none is 37.5 (sim-agent-hallucinating's invented figure), so a
 * figure in an answer tells which fact it came from.
 */

const SOURCE = 'https://sim.judgeflow.invalid';

export interface PriceFact {
  symbol: string;
  name: string;
  price: number;
  currency: 'USD';
  change24hPct: number;
  volume24hUsd: number;
  source: string;
  asOf: string;
}
export interface TvlFact {
  protocol: string;
  category: string;
  /** The protocol's governance token in the price list, if it has one there. */
  token: string | null;
  tvlUsd: number;
  change7dPct: number;
  source: string;
  asOf: string;
}
export interface FundingFact {
  symbol: string;
  /** Open-interest-weighted funding rate across perpetual venues, percent per 8-hour period. */
  fundingRate8hPct: number;
  openInterestUsd: number;
  source: string;
  asOf: string;
}
export interface UnlockEvent {
  date: string;
  amount: number;
  pctOfCirculating: number;
  recipient: string;
}
export interface UnlocksFact {
  token: string;
  /** Scheduled unlocks, soonest first; empty for a token with no vesting schedule. */
  unlocks: UnlockEvent[];
  source: string;
  asOf: string;
}
export interface HolderFact {
  token: string;
  /** Share of supply held by the ten largest addresses, percent. */
  top10SharePct: number;
  holders: number;
  source: string;
  asOf: string;
}

const PRICES_AS_OF = '2026-11-30T12:00:00Z';
const price = (symbol: string, name: string, value: number, change24hPct: number, volume24hUsd: number): PriceFact => ({
  symbol,
  name,
  price: value,
  currency: 'USD',
  change24hPct,
  volume24hUsd,
  source: `${SOURCE}/prices/${symbol.toLowerCase()}`,
  asOf: PRICES_AS_OF,
});

export const PRICES: readonly PriceFact[] = [
  price('BTC', 'Bitcoin', 91234.56, -1.84, 41870000000),
  price('ETH', 'Ethereum', 3187.42, 2.31, 19460000000),
  price('SOL', 'Solana', 142.87, 4.12, 3920000000),
  price('AAVE', 'Aave', 187.65, -0.92, 284000000),
  price('UNI', 'Uniswap', 7.84, 1.15, 196000000),
  price('ARB', 'Arbitrum', 0.4123, -3.27, 231000000),
  price('OP', 'Optimism', 1.362, 0.58, 148000000),
  price('LINK', 'Chainlink', 14.29, 2.06, 512000000),
];

const TVL_AS_OF = '2026-11-30T00:00:00Z';
const tvl = (
  protocol: string,
  category: string,
  token: string | null,
  tvlUsd: number,
  change7dPct: number,
): TvlFact => ({
  protocol,
  category,
  token,
  tvlUsd,
  change7dPct,
  source: `${SOURCE}/tvl/${protocol.toLowerCase()}`,
  asOf: TVL_AS_OF,
});

export const TVL: readonly TvlFact[] = [
  tvl('Aave', 'lending', 'AAVE', 24810000000, 3.4),
  tvl('Uniswap', 'dex', 'UNI', 5120000000, -1.2),
  tvl('Lido', 'liquid staking', null, 27450000000, 0.8),
  tvl('MakerDAO', 'cdp', null, 6930000000, 2.2),
  tvl('Curve', 'dex', null, 2210000000, -4.6),
  tvl('EigenLayer', 'restaking', null, 15380000000, 5.9),
];

const FUNDING_AS_OF = '2026-11-30T08:00:00Z';
const funding = (symbol: string, fundingRate8hPct: number, openInterestUsd: number): FundingFact => ({
  symbol,
  fundingRate8hPct,
  openInterestUsd,
  source: `${SOURCE}/funding/${symbol.toLowerCase()}`,
  asOf: FUNDING_AS_OF,
});

export const FUNDING: readonly FundingFact[] = [
  funding('BTC', 0.0103, 31240000000),
  funding('ETH', 0.0085, 14780000000),
  funding('SOL', 0.0213, 3610000000),
  funding('AAVE', 0.0061, 162000000),
  funding('UNI', -0.0042, 88000000),
  funding('ARB', -0.0117, 119000000),
  funding('OP', 0.0034, 73000000),
  funding('LINK', 0.0058, 301000000),
];

const UNLOCKS_AS_OF = '2026-11-30T00:00:00Z';
const unlocks = (token: string, events: UnlockEvent[]): UnlocksFact => ({
  token,
  unlocks: events,
  source: `${SOURCE}/unlocks/${token.toLowerCase()}`,
  asOf: UNLOCKS_AS_OF,
});

/** Tokens of the world: every priced symbol, and EIGEN (EigenLayer's token, unpriced here). */
export const UNLOCKS: readonly UnlocksFact[] = [
  unlocks('BTC', []),
  unlocks('ETH', []),
  unlocks('SOL', [{ date: '2027-01-07', amount: 1850000, pctOfCirculating: 0.34, recipient: 'foundation' }]),
  unlocks('AAVE', []),
  unlocks('UNI', [{ date: '2026-12-18', amount: 4120000, pctOfCirculating: 0.68, recipient: 'team and investors' }]),
  unlocks('ARB', [
    { date: '2026-12-16', amount: 92650000, pctOfCirculating: 1.87, recipient: 'team and investors' },
    { date: '2027-01-16', amount: 92650000, pctOfCirculating: 1.83, recipient: 'team and investors' },
  ]),
  unlocks('OP', [
    { date: '2026-12-31', amount: 31340000, pctOfCirculating: 1.62, recipient: 'core contributors and investors' },
  ]),
  unlocks('LINK', [
    { date: '2026-12-21', amount: 19500000, pctOfCirculating: 2.91, recipient: 'non-circulating supply' },
  ]),
  unlocks('EIGEN', [
    { date: '2026-12-01', amount: 36820000, pctOfCirculating: 6.14, recipient: 'early backers and investors' },
  ]),
];

const HOLDERS_AS_OF = '2026-11-29T00:00:00Z';
const holders = (token: string, top10SharePct: number, count: number): HolderFact => ({
  token,
  top10SharePct,
  holders: count,
  source: `${SOURCE}/holders/${token.toLowerCase()}`,
  asOf: HOLDERS_AS_OF,
});

export const HOLDERS: readonly HolderFact[] = [
  holders('BTC', 5.93, 55310000),
  holders('ETH', 38.21, 128400000),
  holders('SOL', 27.46, 9870000),
  holders('AAVE', 52.34, 171000),
  holders('UNI', 44.72, 392000),
  holders('ARB', 61.83, 1240000),
  holders('OP', 67.19, 418000),
  holders('LINK', 58.42, 802000),
  holders('EIGEN', 71.26, 96000),
];

/** Names a question or a tool argument may use for a token, besides its symbol (lowercase). */
export const TOKEN_NAMES: Readonly<Record<string, string>> = {
  bitcoin: 'BTC',
  ethereum: 'ETH',
  ether: 'ETH',
  solana: 'SOL',
  arbitrum: 'ARB',
  optimism: 'OP',
  chainlink: 'LINK',
  eigen: 'EIGEN',
};

/** Names a protocol may go by besides its own (lowercase, letters and digits only). */
export const PROTOCOL_ALIASES: Readonly<Record<string, string>> = {
  aavev3: 'Aave',
  uniswapv3: 'Uniswap',
  lidofinance: 'Lido',
  maker: 'MakerDAO',
  sky: 'MakerDAO',
  curvefinance: 'Curve',
  curvedex: 'Curve',
};
